// Statistics both the profiler and the analyzer use, written once: one-sided
// quantiles of the normal and Student's t distributions, and the geometric mean.
#pragma once

#include <span>

namespace shapescope {

// x with P(X > x) = tail, for 0 < tail < 0.5 (so 1.959964 for 0.025). Throws UserError otherwise.
double upper_normal_quantile(double tail);
// The same for Student's t with `dof` > 0 degrees of freedom (12.7062 for 0.025 and 1; numerical, about 3 ms).
double upper_student_quantile(double tail, double dof);

// exp(mean(log(values))) of positive values; 1 (no change) for none.
double geometric_mean(std::span<const double> values);

}  // namespace shapescope
