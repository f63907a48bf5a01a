// The timing noise of the points a sweep has measured so far, one kernel's file at a time: a criterion that
// pools noise across points (pooled-ci95, profiler/stopping_criterion.hpp) reads it, the measurement loop
// appends each finished point to it. One sweep thread owns it (no locking).
#pragma once

#include <span>
#include <vector>

namespace shapescope::profiler {

// One point's sample variance relative to its mean squared, with its degrees of freedom (samples - 1).
struct PointNoise {
  double relative_variance = 0;
  int dof = 0;
  bool joins_pool = true;  // false: far noisier than its neighbours' pool (a spike)
};

// The pooled estimate over some points: sum(w_i * v_i) / sum(w_i), w_i = min(dof_i, 8), with sum(w_i) degrees
// of freedom (fewer than the points have: a conservative t quantile).
struct PooledNoise {
  double relative_variance = 0;
  int dof = 0;
};

class NoiseHistory {
 public:
  // A point of fewer than 2 samples, or without a positive mean, says nothing about spread and is skipped.
  void add(std::span<const double> samples, bool joins_pool = true);
  // The pool of the last `window` points that join it among the last 2 x `window` added: a point noisier than
  // its neighbours does not inflate the pool for those after it, and where the noise has risen for good the
  // pool runs short (its points all refused) and the criterion goes by the points' own samples until
  // they make a new one.
  PooledNoise pooled(int window) const;
  int points() const { return int(points_.size()); }

 private:
  std::vector<PointNoise> points_;
};

// `samples`' variance relative to their mean squared, with samples - 1 degrees of freedom (dof 0 when it has
// none).
PointNoise point_noise(std::span<const double> samples);

}  // namespace shapescope::profiler
