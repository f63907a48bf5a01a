#include "profiler/noise_history.hpp"

#include <algorithm>
#include <cmath>

#include "profiler/sample_stats.hpp"

namespace shapescope::profiler {

namespace {

// A point counts in the pool with at most this many degrees of freedom: one that ran to thousands of samples
// (its mean held up by slow ones) would otherwise outweigh every point around it. Counting fewer degrees of
// freedom than a point has only widens the pool's t quantile.
constexpr int kMaxDofPerPoint = 8;

}  // namespace

PointNoise point_noise(std::span<const double> samples) {
  PointNoise noise;
  const double variance = relative_variance(samples);
  if (std::isnan(variance)) return noise;
  noise.dof = int(samples.size()) - 1;
  noise.relative_variance = variance;
  return noise;
}

void NoiseHistory::add(std::span<const double> samples, bool joins_pool) {
  PointNoise noise = point_noise(samples);
  noise.joins_pool = joins_pool;
  if (noise.dof > 0) points_.push_back(noise);
}

PooledNoise NoiseHistory::pooled(int window) const {
  PooledNoise pool;
  const std::size_t span = 2 * std::size_t(std::max(window, 0));
  const std::size_t first = points_.size() - std::min(points_.size(), span);
  double weighted = 0;
  int joined = 0;
  for (std::size_t i = points_.size(); i > first && joined < window; --i) {
    const PointNoise& point = points_[i - 1];
    if (!point.joins_pool) continue;
    const int weight = std::min(point.dof, kMaxDofPerPoint);
    weighted += weight * point.relative_variance;
    pool.dof += weight;
    ++joined;
  }
  if (pool.dof > 0) pool.relative_variance = weighted / pool.dof;
  return pool;
}

}  // namespace shapescope::profiler
