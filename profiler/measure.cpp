// The measurement core, generic over kernels::Device: what is timed is
// PreparedGemm::run(); how (timing mode, cold/hot, adaptive stopping) lives here.
#include "profiler/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/interrupt.hpp"
#include "kernels/sm_clock_probe.hpp"
#include "kernels/stream_hold.hpp"
#include "profiler/sample_stats.hpp"
#include "profiler/stopping_criterion.hpp"
#include "profiler/throttle.hpp"

namespace shapescope::profiler {

namespace {

using kernels::TimingMode;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Hot samples cover about this much kernel time, so launch gaps vanish in the mean.
constexpr double kBatchSpanUs = 200.0;
constexpr int kMaxLaunchesPerBatch = 1000;
// A graph replay holds at least this many runs, so the graph launch's own start is
// shared out (one large GEMM rotates over a single operand set).
constexpr int kMinRunsPerReplay = 4;
// A graph's first replay runs a few µs longer than the later ones (~4 µs on an H100: its samples' maximum sat
// 2.5% above their median at M ≤ 256 when it was timed). It is a sample only from this length on, where that
// is under 0.5%; a shorter one is an untimed warm-up, cheap where it is short.
constexpr double kFirstReplaySampleFromUs = 1000.0;
// Cold event samples go to the device in groups: up to min_samples at first, then this many at a time, so at
// most kSamplesPerGroup - 1 runs are wasted once the stopping rule is met; never more than kMaxGroup at once.
constexpr int kSamplesPerGroup = 4;
constexpr int kMaxGroup = 32;
// Cold event samples are enqueued behind a stream hold (kernels/stream_hold.hpp), at most this many per hold: a
// flush, two events and a run each (a library's or a Python callable's run may launch several kernels) keep
// the launches held far below CUDA's queue of pending launches (about a thousand), where a launch would wait
// for the hold's timeout. A hold that times out halves this for the rest of the point; at zero it holds no more.
constexpr int kMaxHeldSamples = 8;

std::vector<kernels::PreparedGemm*> repeated(std::span<kernels::PreparedGemm* const> runs, int count) {
  std::vector<kernels::PreparedGemm*> sequence;
  for (int i = 0; i < count; ++i) sequence.insert(sequence.end(), runs.begin(), runs.end());
  return sequence;
}

}  // namespace

bool holds_stream(const MeasureOptions& options) {
  return options.blocking_kernel && options.timing == TimingMode::events && !options.hot;
}

Measurement measure(kernels::Device& device, kernels::PreparedGemm& gemm, const MeasureOptions& options) {
  kernels::PreparedGemm* const sets[] = {&gemm};
  return measure(device, sets, options);
}

Measurement measure(kernels::Device& device, std::span<kernels::PreparedGemm* const> operand_sets,
                    const MeasureOptions& options, NoiseHistory* history) {
  if (operand_sets.empty()) throw std::invalid_argument("measure: no operand set");
  Measurement result;
  kernels::PreparedGemm& first = *operand_sets.front();
  const bool graph = options.timing == TimingMode::graph;
  const std::span<kernels::PreparedGemm* const> rotated = graph && !options.hot ? operand_sets : operand_sets.first(1);
  result.operand_sets = int(rotated.size());
  const auto* accounting =
      options.power_accounting ? dynamic_cast<const kernels::ThrottleAccountingSource*>(&device) : nullptr;
  auto read_clock = [&](std::optional<kernels::ThrottleReading>& throttle) {
    const auto start = Clock::now();
    const std::optional<kernels::ClockSample> sample = device.sample_clock();
    if (accounting) throttle = accounting->read_throttle_accounting();
    result.clocks_s += seconds_since(start);
    return sample;
  };
  result.clock_start = read_clock(result.throttle_start);
  const auto warm_up_start = Clock::now();
  // Each set is brought to warmup_runs untimed runs. A set never run still runs once before a capture, since
  // lazy initialisation (module loading, library workspaces) cannot happen inside one.
  int warm_up_runs = 0;
  for (std::size_t set = 0; set < rotated.size(); ++set) {
    const int done = set == 0 ? std::max(0, options.first_set_runs_done) : 0;
    const int runs = std::max(graph && done == 0 ? 1 : 0, options.warmup_runs - done);
    for (int i = 0; i < runs; ++i) {
      if (interrupt_requested()) {  // --warmup 100000 must not outlast a Ctrl-C
        device.synchronize();
        result.interrupted = true;
        return result;
      }
      rotated[set]->run();
      ++warm_up_runs;
    }
  }
  device.synchronize();
  // The warm-up's wall time per run: about a run's GPU time where the device, not the launches, set the pace.
  const double warm_up_us_per_run = warm_up_runs > 0 ? 1e6 * seconds_since(warm_up_start) / warm_up_runs : 0.0;

  // Samples of one launch each (events, kernel), or of a captured sequence (graph, hot).
  std::unique_ptr<kernels::Timer> timer =
      options.timing == TimingMode::kernel ? device.make_kernel_timer() : device.make_timer();
  std::unique_ptr<kernels::RunSequence> sequence;
  int runs_per_replay = 0;
  std::optional<double> first_replay_us;  // the first replay, kept as the first sample
  double first_replay_sample_us = 0;
  auto capture = [&](int repeats) {
    sequence.reset();
    sequence = device.capture(repeated(rotated, repeats));
    runs_per_replay = repeats * int(rotated.size());
    const double replay_us = sequence->replay_us();
    if (replay_us >= kFirstReplaySampleFromUs) first_replay_us = first_replay_sample_us = replay_us;
  };
  if (graph && !options.hot) capture((kMinRunsPerReplay + int(rotated.size()) - 1) / int(rotated.size()));

  // One timed sample, in µs per run; `timed_us` grows by the kernel time it covered.
  auto sample = [&](double& timed_us) {
    if (sequence) {
      const double total_us = first_replay_us ? *std::exchange(first_replay_us, std::nullopt) : sequence->replay_us();
      timed_us += total_us;
      return total_us / runs_per_replay;
    }
    if (!options.hot) device.flush_cache();
    timer->start();
    first.run();
    timer->stop();
    const double us = timer->elapsed_us();
    timed_us += us;
    return us;
  };
  double probe_timed_us = 0;
  if (options.hot && options.timing != TimingMode::kernel) {
    // Hot runs are never timed alone: one probe sizes the batches and is dropped.
    const double probe_us = sample(probe_timed_us);
    result.timed_us_total += probe_timed_us;
    capture(std::clamp(int(std::ceil(kBatchSpanUs / std::max(probe_us, 0.01))), 2, kMaxLaunchesPerBatch));
  }

  // SM clock probes (kernels/sm_clock_probe.hpp) go between samples, never inside a timed interval: before the
  // first, then after a sample once kProbeEveryUs of samples ran since the last probe, and after the last. Left
  // out under kernel timing, so that the kernels CUPTI records are the run's alone.
  kernels::SmClockProbe* const clock_probe = options.clock_probes && options.timing != TimingMode::kernel
                                                 ? dynamic_cast<kernels::SmClockProbe*>(&device)
                                                 : nullptr;
  double us_since_probe = 0;
  auto probe_clock = [&] {
    if (!clock_probe) return;
    clock_probe->enqueue_probe();  // a point whose probes fill the device's slots goes on without more
    us_since_probe = 0;
  };
  auto probe_clock_when_due = [&](double sample_us) {
    us_since_probe += sample_us;
    if (us_since_probe >= kProbeEveryUs) probe_clock();
  };

  // Cold event samples (flush, start, run, stop each) are enqueued a group at a time: the device runs one while
  // the host enqueues the next, and the host waits once per group rather than idling the device once per
  // sample. The stopping rule still sees the samples one by one and stops where it would; samples of a group
  // past that point are dropped (untimed). Each batch of a group waits behind a stream hold while it is
  // enqueued, so that the host's enqueue of a run never lands between its start event and its launch.
  const bool in_groups = !sequence && options.timing == TimingMode::events && !options.hot;
  kernels::StreamHold* const stream_hold =
      in_groups && holds_stream(options) ? dynamic_cast<kernels::StreamHold*>(&device) : nullptr;
  int held_samples = kMaxHeldSamples;
  // Every earlier hold has ended: the device was waited for after the warm-up.
  const long long timed_out_before = stream_hold ? stream_hold->timed_out_holds() : 0;
  std::vector<std::unique_ptr<kernels::Timer>> group_timers;
  std::deque<double> group_times;  // read from the device, not yet seen by the stopping rule
  std::vector<double> samples;
  const int min_samples = std::max(1, options.min_samples);
  const int max_samples = std::max(min_samples, options.max_samples);
  auto next_sample = [&]() -> double {
    if (!in_groups) return sample(result.timed_us_total);
    if (group_times.empty()) {
      const int count = int(samples.size());
      const int wanted = count < min_samples ? min_samples - count : kSamplesPerGroup;
      const int group = std::clamp(std::min(wanted, max_samples - count), 1, kMaxGroup);
      while (int(group_timers.size()) < group) group_timers.push_back(device.make_timer());
      int launched = 0;  // a group of slow runs (a Python callable's) stops early on an interrupt
      auto stopping = [&] { return launched > 0 && interrupt_requested(); };
      while (launched < group && !stopping()) {
        // One batch: released after its last stop event, or on an interrupt or a throw.
        const bool holding = stream_hold && held_samples > 0;
        const kernels::ScopedStreamHold held(holding ? stream_hold : nullptr);
        result.holds += holding;
        const int batch_end = holding ? std::min(group, launched + held_samples) : group;
        for (; launched < batch_end && !stopping(); ++launched) {
          device.flush_cache();
          group_timers[std::size_t(launched)]->start();
          first.run();
          group_timers[std::size_t(launched)]->stop();
          // The group's times are read after it is enqueued: the last sample's time stands for each, the
          // warm-up's for the first group's.
          probe_clock_when_due(samples.empty() ? warm_up_us_per_run : samples.back());
        }
      }
      if (samples.empty() && warm_up_us_per_run == 0) probe_clock();  // no time known: after the first group
      for (int i = 0; i < launched; ++i) group_times.push_back(group_timers[std::size_t(i)]->elapsed_us());
      if (stream_hold) {  // the group's holds have ended: their stop events were waited for
        const int timed_out = int(stream_hold->timed_out_holds() - timed_out_before);
        if (timed_out > result.timed_out_holds) held_samples /= 2;
        result.timed_out_holds = timed_out;
      }
    }
    const double us = group_times.front();
    group_times.pop_front();
    result.timed_us_total += us;
    return us;
  };

  const auto point_start = Clock::now();
  result.warm_up_s = std::max(0.0, std::chrono::duration<double>(point_start - warm_up_start).count() -
                                        (probe_timed_us + first_replay_sample_us) / 1e6);
  probe_clock();  // before the first timed sample
  auto seconds_spent = [&] { return seconds_since(point_start); };
  const std::unique_ptr<StoppingCriterion> criterion = make_stopping_criterion(options, history);
  while (true) {
    if (interrupt_requested()) {
      result.interrupted = true;
      break;
    }
    const double timed_before_us = result.timed_us_total;
    samples.push_back(next_sample());
    if (!in_groups) probe_clock_when_due(result.timed_us_total - timed_before_us);
    criterion->add(samples.back());
    if (criterion->done()) {
      result.converged = true;
      break;
    }
    const int count = int(samples.size());
    if (count >= max_samples) break;
    if (count >= min_samples && seconds_spent() >= options.max_seconds_per_point) break;
  }
  // Never below 0: a scripted (fake) timer may report more than the wall time the loop took.
  result.between_samples_s =
      std::max(0.0, seconds_spent() - (result.timed_us_total - probe_timed_us - first_replay_sample_us) / 1e6);
  if (clock_probe) {
    const auto collect_start = Clock::now();
    if (us_since_probe > 0) probe_clock();  // after the last sample
    result.probed_clock = summarize_probes(clock_probe->collect_probes());
    result.clocks_s += seconds_since(collect_start);
  }
  const auto release_start = Clock::now();
  sequence.reset();
  result.launched = timer->launched();
  result.warm_up_s += seconds_since(release_start);

  result.clock_end = read_clock(result.throttle_end);
  const SampleSummary summary = summarize(samples);
  result.median_us = summary.median;
  result.mean_us = summary.mean;
  result.min_us = summary.min;
  result.max_us = summary.max;
  result.stddev_us = summary.stddev;
  const std::optional<double> pooled_ci95 = criterion->recorded_relative_ci95();
  result.ci95_us = pooled_ci95 ? *pooled_ci95 * summary.mean : summary.ci95;
  if (history && !result.interrupted) history->add(samples, criterion->joins_pool());
  result.samples = summary.count;
  if (result.clock_start && result.clock_end && result.clock_start->sm_clock_mhz > 0) {
    result.throttled = result.clock_end->sm_clock_mhz < kThrottleClockRatio * result.clock_start->sm_clock_mhz;
  }
  return result;
}

}  // namespace shapescope::profiler
