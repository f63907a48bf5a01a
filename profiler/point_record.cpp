#include "profiler/point_record.hpp"

#include <fmt/format.h>

#include "profiler/throttle.hpp"

namespace shapescope::profiler {

void record_measurement(ProfileRow& row, const Measurement& m, const kernels::CheckResult& check, double flops,
                        double min_bytes, double check_threshold) {
  row.rel_err = check.rel_err;
  row.operand_sets = m.operand_sets;
  row.launched = m.launched;
  row.kernel_time_us = m.median_us;
  row.tflops = flops / m.median_us / 1e6;
  row.utils = row.peak_tflops > 0 ? row.tflops / row.peak_tflops : 0;
  row.time_us_min = m.min_us;
  row.time_us_max = m.max_us;
  row.time_us_stddev = m.stddev_us;
  row.ci95_us = m.ci95_us;
  row.samples = m.samples;
  row.gbytes_per_s = min_bytes / m.median_us / 1e3;
  if (m.clock_start) {
    row.sm_clock_mhz = m.clock_start->sm_clock_mhz;
    row.temperature_c = m.clock_start->temperature_c;
    row.power_w = m.clock_start->power_w;
  }
  if (m.clock_end) row.sm_clock_end_mhz = m.clock_end->sm_clock_mhz;
  if (m.probed_clock) {
    row.sm_clock_sampled_min_mhz = m.probed_clock->lowest_mhz;
    row.sm_clock_sampled_mean_mhz = m.probed_clock->mean_mhz;
  }
  if (m.throttle_start && m.throttle_end) {
    if (const auto share = kernels::held_share(m.throttle_start->power, m.throttle_end->power))
      row.power_capped_pct = 100 * *share;
  }
  if (m.throttle_start && m.throttle_start->power_limit_w > 0) row.power_limit_w = m.throttle_start->power_limit_w;
  if (!check.passed(check_threshold)) {
    row.status = kStatusNumericalFail;
    row.note = check.unwritten > 0
                   ? fmt::format("{} of {} checked outputs unwritten", check.unwritten, check.elements_checked)
                   : fmt::format("rel_err {:.3g} above {:.3g}", check.rel_err, check_threshold);
  } else if (m.throttled) {
    row.status = kStatusThrottled;
    row.note =
        fmt::format("SM clock fell below {:.0f}% of its value at the start of the point", 100 * kThrottleClockRatio);
  }
  if (m.timed_out_holds > 0) {  // those samples were timed as without the hold: not wrong, maybe slower
    const std::string held = fmt::format(
        "{} of {} stream holds timed out (their samples may include host enqueue time)", m.timed_out_holds, m.holds);
    row.note = row.note.empty() ? held : row.note + "; " + held;
  }
}

void record_config(ProfileRow& row, const kernels::KernelConfig& config) {
  row.tile_m = config.tile_m;
  row.tile_n = config.tile_n;
  row.cluster_m = config.cluster_m;
  row.cluster_n = config.cluster_n;
  row.cluster_k = config.cluster_k;
  row.split_k = config.split_k;
}

bool record_unmeasured(ProfileRow& row, const std::optional<std::string>& unsupported, bool session_open,
                       const std::string& open_error) {
  if (unsupported) {
    row.status = kStatusUnsupported;
    row.note = *unsupported;
    return true;
  }
  if (session_open) return false;
  row.status = kStatusError;
  row.note = "opening the kernel failed: " + open_error;
  return true;
}

}  // namespace shapescope::profiler
