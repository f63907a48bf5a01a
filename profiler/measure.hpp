// How one point is measured (nvbench-style, written for shapescope): warm-up, then
// samples in one of three timing modes (kernels::TimingMode), adaptive sampling until
// the mean is known to a target precision, clock checks around the point.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>

#include "kernels/kernel.hpp"
#include "kernels/throttle_accounting.hpp"
#include "profiler/probed_clock.hpp"
#include "profiler/noise_history.hpp"

namespace shapescope::profiler {

struct MeasureOptions {
  int warmup_runs = 2;  // untimed runs of every operand set before its first sample
  // Untimed runs of the first operand set the caller has just made (the sweep's correctness check runs it
  // once); they count toward warmup_runs.
  int first_set_runs_done = 0;
  int min_samples = 5;
  int max_samples = 2000;
  double target_rel_stderr = 0.005;  // the stderr criterion: stop when stderr(mean)/mean is below this
  std::string stopping_criterion = "pooled-ci95";   // profiler/stopping_criterion.hpp
  std::map<std::string, double> criterion_params;   // over the criterion's defaults
  double max_seconds_per_point = 1.0;
  // false: every sample starts from a cold cache (flushed, or rotated out in graph mode).
  // true: operands stay cached, and every sample is a graph batch of launches of one
  // operand set, since nothing else keeps the GPU busy while the host enqueues a lone
  // launch (its gap would be timed as kernel time).
  bool hot = false;
  kernels::TimingMode timing = kernels::TimingMode::events;
  // Read the device's throttle accounting beside the clock at the point's start and end
  // (kernels/throttle_accounting.hpp): off by default, since NVML answers it in 0.4-0.7 ms a reading.
  bool power_accounting = false;
  // Probe the SM clock on the device between the timed samples (profiler/probed_clock.hpp), where the device
  // can (kernels/sm_clock_probe.hpp).
  bool clock_probes = true;
  // Hold the stream while each batch of cold event samples is enqueued, then run it back to back
  // (kernels/stream_hold.hpp: nvbench's blocking kernel), where the device can.
  bool blocking_kernel = false;
};

// Whether `options` put cold event samples behind stream holds (on a device that can hold).
bool holds_stream(const MeasureOptions& options);

struct Measurement {
  double median_us = 0, mean_us = 0, min_us = 0, max_us = 0, stddev_us = 0;
  double ci95_us = 0;        // half-width of the 95% interval of the mean
  int samples = 0;
  double timed_us_total = 0; // sum of timed kernel time (for the sweep's overhead ratio)
  bool converged = false;    // the stopping criterion was met before a cap
  std::optional<kernels::ClockSample> clock_start, clock_end;
  // Beside each clock reading, where the device keeps throttle accounting (kernels/throttle_accounting.hpp).
  std::optional<kernels::ThrottleReading> throttle_start, throttle_end;
  bool throttled = false;    // SM clock fell during the point
  std::optional<ProbedClock> probed_clock;  // probed between the samples
  // Stream holds around the batches of cold event samples, and those that ended by their timeout (their
  // samples may hold host enqueue time, as without a hold).
  int holds = 0, timed_out_holds = 0;
  int operand_sets = 1;      // distinct operand sets the samples rotated over
  std::string launched;      // kernel mode: what the last sample's run launched
  // Host wall time of the point's untimed parts (the sweep's phase breakdown, point_phases.hpp): the
  // clock readings; warm-up runs, timers, graph capture and release; the sample loop's wall time less
  // the timed time in it. With timed_us_total they add up to the point's measuring time.
  double clocks_s = 0, warm_up_s = 0, between_samples_s = 0;
  bool interrupted = false;  // SIGINT/SIGTERM cut the warm-up or the samples short: not a measurement
};

// `operand_sets` are one GEMM over distinct buffers (at least one). Graph mode replays
// them all, in order, as one captured unit and reports the time per run; events and
// kernel modes time the first alone, after a cache flush unless hot. `history`: the noise of the sweep's
// earlier points of the same file, for a criterion that pools it; the point's samples join it when it ends.
Measurement measure(kernels::Device& device, std::span<kernels::PreparedGemm* const> operand_sets,
                    const MeasureOptions& options, NoiseHistory* history = nullptr);
Measurement measure(kernels::Device& device, kernels::PreparedGemm& gemm, const MeasureOptions& options);

}  // namespace shapescope::profiler
