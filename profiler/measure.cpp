// The measurement core, generic over kernels::Device: what is timed is one
// PreparedGemm::run(); how (cold/hot, batched, adaptive stopping) lives here.
#include "profiler/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "profiler/sample_stats.hpp"
#include "profiler/throttle.hpp"

namespace shapescope::profiler {

namespace {

// Batched hot samples cover about this much kernel time, so launch gaps vanish in the mean.
constexpr double kBatchSpanUs = 200.0;
constexpr int kMaxLaunchesPerBatch = 1000;

}  // namespace

Measurement measure(kernels::Device& device, kernels::PreparedGemm& gemm, const MeasureOptions& options) {
  Measurement result;
  result.clock_start = device.sample_clock();
  for (int i = 0; i < options.warmup_runs; ++i) gemm.run();
  device.synchronize();

  const auto point_start = std::chrono::steady_clock::now();
  auto seconds_spent = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - point_start).count();
  };
  auto timer = device.make_timer();
  auto time_one_run = [&] {
    if (!options.hot) device.flush_cache();
    timer->start();
    gemm.run();
    timer->stop();
    return timer->elapsed_us();
  };

  int launches_per_sample = 1;
  std::vector<double> samples;
  const int min_samples = std::max(1, options.min_samples);
  const int max_samples = std::max(min_samples, options.max_samples);
  while (true) {
    double sample_us;
    if (launches_per_sample > 1) {
      const double total_us = device.time_batched(gemm, launches_per_sample);
      result.timed_us_total += total_us;
      sample_us = total_us / launches_per_sample;
    } else {
      sample_us = time_one_run();
      result.timed_us_total += sample_us;
      if (options.hot && samples.empty()) {
        // Hot runs are never timed alone: this probe only sizes the batches and is dropped.
        launches_per_sample = std::clamp(int(std::ceil(kBatchSpanUs / std::max(sample_us, 0.01))), 2,
                                         kMaxLaunchesPerBatch);
        continue;
      }
    }
    samples.push_back(sample_us);
    if (precise_enough(samples, min_samples, options.target_rel_stderr)) {
      result.converged = true;
      break;
    }
    const int count = int(samples.size());
    if (count >= max_samples) break;
    if (count >= min_samples && seconds_spent() >= options.max_seconds_per_point) break;
  }

  result.clock_end = device.sample_clock();
  const SampleSummary summary = summarize(samples);
  result.median_us = summary.median;
  result.mean_us = summary.mean;
  result.min_us = summary.min;
  result.max_us = summary.max;
  result.stddev_us = summary.stddev;
  result.ci95_us = summary.ci95;
  result.samples = summary.count;
  if (result.clock_start && result.clock_end && result.clock_start->sm_clock_mhz > 0) {
    result.throttled = result.clock_end->sm_clock_mhz < kThrottleClockRatio * result.clock_start->sm_clock_mhz;
  }
  return result;
}

}  // namespace shapescope::profiler
