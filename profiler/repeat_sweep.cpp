#include "profiler/repeat_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "profiler/sample_stats.hpp"

namespace shapescope::profiler {

namespace {
// The same limit the measurement core uses within a point.
constexpr double kThrottleRatio = 0.97;
}  // namespace

std::vector<ScheduledPoint> repeat_schedule(const std::vector<int64_t>& m_values, int passes, uint64_t seed) {
  std::vector<ScheduledPoint> schedule;
  std::mt19937_64 random(seed);
  for (int pass = 0; pass < std::max(1, passes); ++pass) {
    std::vector<int64_t> order = m_values;
    if (passes > 1) std::shuffle(order.begin(), order.end(), random);
    for (const int64_t m : order) schedule.push_back({pass, m});
  }
  return schedule;
}

ProfileRow combine_passes(const std::vector<ProfileRow>& passes) {
  if (passes.empty()) throw std::invalid_argument("combine_passes: no rows");
  const auto failing = std::find_if(passes.begin(), passes.end(), [](const ProfileRow& row) {
    return row.status != kStatusOk && row.status != kStatusThrottled;
  });
  if (failing != passes.end()) {
    ProfileRow row = *failing;
    row.passes = int64_t(passes.size());
    return row;
  }
  std::vector<double> medians;
  for (const ProfileRow& row : passes) medians.push_back(row.kernel_time_us);
  const SampleSummary spread = summarize(medians);

  // Start from the pass whose time is the median (its kernel_name and clocks are typical).
  const auto typical = std::min_element(passes.begin(), passes.end(), [&](const ProfileRow& a, const ProfileRow& b) {
    return std::abs(a.kernel_time_us - spread.median) < std::abs(b.kernel_time_us - spread.median);
  });
  ProfileRow row = *typical;
  const double scale = row.kernel_time_us > 0 ? row.kernel_time_us / spread.median : 1;
  row.kernel_time_us = spread.median;
  row.tflops *= scale;
  row.utils *= scale;
  row.gbytes_per_s *= scale;
  row.time_us_min = spread.min;
  row.time_us_max = spread.max;
  row.time_us_stddev = spread.stddev;
  row.passes = int64_t(passes.size());
  row.samples = 0;
  double widest_within = 0;
  for (const ProfileRow& pass : passes) {
    row.samples += pass.samples;
    widest_within = std::max(widest_within, pass.ci95_us);
    row.rel_err = std::max(row.rel_err, pass.rel_err);
    row.sm_clock_mhz = std::min(row.sm_clock_mhz, pass.sm_clock_mhz);
    row.sm_clock_end_mhz = std::min(row.sm_clock_end_mhz, pass.sm_clock_end_mhz);
    row.temperature_c = std::max(row.temperature_c, pass.temperature_c);
    row.power_w = std::max(row.power_w, pass.power_w);
    if (pass.status == kStatusThrottled) {
      row.status = kStatusThrottled;
      row.note = pass.note;
    }
  }
  row.ci95_us = std::max(passes.size() > 1 ? spread.ci95 : 0.0, widest_within);
  return row;
}

SteadyClock warm_until_clock_settles(kernels::Device& device, kernels::PreparedGemm& gemm,
                                     const SteadyClockOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  SteadyClock result;
  std::vector<double> window_clocks;
  while (seconds_since(start) < options.max_seconds) {
    const auto window_start = Clock::now();
    // Keep the GPU busy for a window; synchronizing each round bounds the queue.
    while (seconds_since(window_start) < options.window_seconds) {
      for (int i = 0; i < 8; ++i) gemm.run();
      device.synchronize();
    }
    const auto sample = device.sample_clock();
    if (!sample) break;  // nothing to wait for: the device cannot tell its clock
    result.settled = sample;
    window_clocks.push_back(sample->sm_clock_mhz);
    if (window_clocks.size() >= 3) {
      const auto last = window_clocks.end() - 3;
      const auto [low, high] = std::minmax_element(last, window_clocks.end());
      if (*high - *low <= options.tolerance * *high) {
        result.reached = true;
        break;
      }
    }
  }
  result.seconds = seconds_since(start);
  return result;
}

void flag_off_steady_clock(ProfileRow& row, double steady_sm_clock_mhz) {
  if (steady_sm_clock_mhz <= 0 || row.sm_clock_mhz <= 0) return;
  if (row.status != kStatusOk && row.status != kStatusThrottled) return;
  const double lowest = row.sm_clock_end_mhz > 0 ? std::min(row.sm_clock_mhz, row.sm_clock_end_mhz) : row.sm_clock_mhz;
  if (lowest >= kThrottleRatio * steady_sm_clock_mhz) return;
  row.status = kStatusThrottled;
  row.note = fmt::format("SM clock {:.0f} MHz, below 97% of the steady {:.0f} MHz reached before the sweep", lowest,
                         steady_sm_clock_mhz);
}

}  // namespace shapescope::profiler
