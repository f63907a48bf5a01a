#include "common/statistics.hpp"

#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

double normal_upper_tail(double x) { return 0.5 * std::erfc(x / std::numbers::sqrt2); }

// P(T > x) for Student's t with `dof` degrees of freedom: 1/2 minus the density's
// integral over [0, x] (Simpson; the density is smooth, 2048 panels are ample).
double student_upper_tail(double x, double dof) {
  const double scale = std::exp(std::lgamma((dof + 1) / 2) - std::lgamma(dof / 2)) / std::sqrt(dof * std::numbers::pi);
  const auto density = [&](double t) { return scale * std::pow(1 + t * t / dof, -(dof + 1) / 2); };
  constexpr int panels = 2048;
  const double h = x / panels;
  double sum = density(0) + density(x);
  for (int k = 1; k < panels; ++k) sum += density(k * h) * (k % 2 ? 4 : 2);
  return 0.5 - sum * h / 3;
}

// Inverts a decreasing tail function by bisection on [0, 64]: 60 halvings reach 1e-16.
template <typename Tail>
double invert_tail(Tail upper, double tail) {
  double low = 0, high = 64;
  for (int step = 0; step < 60; ++step) {
    const double middle = 0.5 * (low + high);
    (upper(middle) > tail ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

}  // namespace

double upper_student_quantile(double tail, double dof) {
  if (!(tail > 0 && tail < 0.5) || !(dof > 0)) {
    throw UserError(fmt::format("a one-sided tail must lie in (0, 0.5) and dof be positive, got {} and {}", tail, dof));
  }
  return invert_tail([dof](double x) { return student_upper_tail(x, dof); }, tail);
}

double upper_normal_quantile(double tail) {
  if (!(tail > 0 && tail < 0.5)) throw UserError(fmt::format("a one-sided tail must lie in (0, 0.5), got {}", tail));
  return invert_tail(normal_upper_tail, tail);
}

double geometric_mean(std::span<const double> values) {
  if (values.empty()) return 1;
  double log_sum = 0;
  for (const double value : values) log_sum += std::log(value);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

}  // namespace shapescope
