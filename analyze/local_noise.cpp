#include "analyze/local_noise.hpp"

#include <cmath>
#include <map>
#include <string>

#include "analyze/order_statistics.hpp"

namespace shapescope::analyze {

namespace {

constexpr std::size_t kLinePoints = 3;          // a line through fewer leaves no residual to speak of
constexpr double kClip = 3;                     // residuals kept: within this many robust spreads
constexpr double kNormalVarianceInClip = 0.9733;  // of a normal's variance, what lies within ±3σ

// Relative residuals of a group's MFU from its Theil-Sen line over the abscissa.
void add_residuals(const Series& series, const std::vector<std::size_t>& group, TrendAbscissa abscissa,
                   std::vector<double>& residuals) {
  const auto utils = [&](std::size_t j) { return series.points[j].utils; };
  const auto x = [&](std::size_t j) {
    return abscissa == TrendAbscissa::m ? static_cast<double>(series.points[j].m) : static_cast<double>(j);
  };
  std::vector<double> slopes;
  for (std::size_t a = 0; a < group.size(); ++a) {
    for (std::size_t b = a + 1; b < group.size(); ++b) {
      slopes.push_back((utils(group[b]) - utils(group[a])) / (x(group[b]) - x(group[a])));
    }
  }
  const double slope = median(slopes);
  std::vector<double> intercepts;
  for (const std::size_t j : group) intercepts.push_back(utils(j) - slope * x(j));
  const double intercept = median(intercepts);
  for (const std::size_t j : group) {
    const double line = intercept + slope * x(j);
    if (line > 0) residuals.push_back(utils(j) / line - 1);
  }
}

}  // namespace

LocalNoise local_noise(const Series& series, const std::vector<std::size_t>& batches, TrendAbscissa abscissa) {
  std::map<std::string, std::vector<std::size_t>> by_kernel;
  for (const std::size_t j : batches) by_kernel[series.points[j].kernel_name].push_back(j);
  std::size_t in_lines = 0;
  for (const auto& [kernel, group] : by_kernel) in_lines += group.size() >= kLinePoints ? group.size() : 0;
  if (2 * in_lines < batches.size()) by_kernel = {{"", batches}};

  std::vector<double> residuals;
  std::size_t lines = 0;
  for (const auto& [kernel, group] : by_kernel) {
    if (group.size() < kLinePoints) continue;
    add_residuals(series, group, abscissa, residuals);
    ++lines;
  }
  LocalNoise noise;
  if (residuals.size() <= 2 * lines) return noise;
  std::vector<double> sizes;
  for (const double r : residuals) sizes.push_back(std::abs(r));
  const double robust = 1.4826 * median(sizes);
  double sum_squares = 0;
  std::size_t kept = 0;
  for (const double r : residuals) {
    if (std::abs(r) > kClip * robust) continue;
    sum_squares += r * r;
    ++kept;
  }
  noise.dof = kept > 2 * lines ? kept - 2 * lines : 1;
  noise.relative_sigma = std::sqrt(sum_squares / static_cast<double>(noise.dof) / kNormalVarianceInClip);
  return noise;
}

}  // namespace shapescope::analyze
