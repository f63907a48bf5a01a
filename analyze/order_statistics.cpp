#include "analyze/order_statistics.hpp"

#include <algorithm>
#include <cstddef>

namespace shapescope::analyze {

double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (position - static_cast<double>(below));
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

}  // namespace shapescope::analyze
