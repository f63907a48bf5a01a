// Quantiles of a sample, as the rules take them.
#pragma once

#include <vector>

namespace shapescope::analyze {

// Linear interpolation between order statistics (numpy's default); `values` must not be empty.
double quantile(std::vector<double> values, double q);
double median(std::vector<double> values);

}  // namespace shapescope::analyze
