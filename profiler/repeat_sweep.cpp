#include "profiler/repeat_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "kernels/synthetic_operands.hpp"
#include "profiler/sample_stats.hpp"
#include "profiler/throttle.hpp"

namespace shapescope::profiler {

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
    return !is_measured_status(row.status);
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
    if (pass.power_capped_pct)
      row.power_capped_pct = std::max(row.power_capped_pct.value_or(0), *pass.power_capped_pct);
    if (pass.sm_clock_sampled_min_mhz)
      row.sm_clock_sampled_min_mhz = std::min(row.sm_clock_sampled_min_mhz.value_or(*pass.sm_clock_sampled_min_mhz),
                                              *pass.sm_clock_sampled_min_mhz);
    if (pass.power_limit_w)
      row.power_limit_w = std::min(row.power_limit_w.value_or(*pass.power_limit_w), *pass.power_limit_w);
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
  while (seconds_since(start) < options.max_seconds && !interrupt_requested()) {
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
  if (!is_measured_status(row.status)) return;
  const double lowest = row.sm_clock_end_mhz > 0 ? std::min(row.sm_clock_mhz, row.sm_clock_end_mhz) : row.sm_clock_mhz;
  if (lowest >= kThrottleClockRatio * steady_sm_clock_mhz) return;
  row.status = kStatusThrottled;
  row.note = fmt::format("SM clock {:.0f} MHz, below {:.0f}% of the steady {:.0f} MHz reached before the sweep", lowest,
                         100 * kThrottleClockRatio, steady_sm_clock_mhz);
}

double warm_up_for_sweep(kernels::Device& device, const std::vector<int64_t>& m_values,
                         const std::vector<GemmProblem>& problems, const std::vector<std::string>& kernel_names,
                         uint64_t seed) {
  if (m_values.empty() || problems.empty()) return 0;
  const auto largest = std::max_element(problems.begin(), problems.end(), [](const GemmProblem& a, const GemmProblem& b) {
    return a.n * a.k * a.batch_count < b.n * b.k * b.batch_count;
  });
  int64_t m = kWarmUpMaxM;
  for (const int64_t candidate : m_values)
    if (candidate <= kWarmUpMaxM) m = candidate;  // m_values are sorted: the largest that fits the cap
  m = std::min(m, m_values.back());
  for (const std::string& name : kernel_names) {
    const kernels::KernelEntry& kernel = kernels::find_kernel(name);
    const kernels::GemmShape shape{m, largest->n, largest->k, largest->batch_count};
    if (kernel.unsupported_reason && kernel.unsupported_reason(shape)) continue;
    try {
      const auto session = kernel.open(device, {largest->n, largest->k, largest->batch_count}, seed);
      if (session->activation_bytes(m) > device.free_memory_bytes()) continue;
      const auto gemm = session->prepare(m, kernels::synthetic::mix(seed));
      const SteadyClock steady = warm_until_clock_settles(device, *gemm, SteadyClockOptions{});
      if (!steady.settled) {
        fmt::print(stderr, "profile: warm-up skipped: {} reports no SM clock\n", device.info().name);
        return 0;
      }
      fmt::print(stderr, "profile: warm-up on {} M={} N={} K={}: SM clock {} at {:.0f} MHz after {:.1f} s\n", name, m,
                 largest->n, largest->k, steady.reached ? "settled" : "still moving", steady.settled->sm_clock_mhz,
                 steady.seconds);
      return steady.settled->sm_clock_mhz;
    } catch (const std::exception& error) {
      fmt::print(stderr, "profile: warm-up with {} failed ({}); trying the next kernel\n", name, error.what());
    }
  }
  return 0;
}

}  // namespace shapescope::profiler
