// The measurement core against a scripted fake device: which calls it makes
// (flushes, timers, captured sequences, clocks) in each timing mode, and when it stops.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <memory>
#include <utility>
#include <vector>

#include "fake_device.hpp"
#include "profiler/measure.hpp"
#include "profiler/sample_stats.hpp"

namespace shapescope::profiler {
namespace {

using kernels::ClockSample;
using testing_fakes::DeviceScript;
using testing_fakes::FakeDevice;

// Counts the runs of the measured GEMMs; each test scripts its own durations.
struct Script : DeviceScript {
  explicit Script(std::deque<double> durations = {}) { durations_us = std::move(durations); }
  int runs = 0;
};

class FakeGemm final : public kernels::PreparedGemm {
 public:
  explicit FakeGemm(Script& script) : script_(script) {}
  void run() override {
    ++script_.runs;
    ++runs;
  }
  int runs = 0;
  kernels::CheckResult check() override { return {}; }
  std::string launch_name() const override { return "fake"; }
  double min_bytes() const override { return 1; }

 private:
  Script& script_;
};

Measurement run_with(Script& script, const MeasureOptions& options) {
  FakeDevice device(script);
  FakeGemm gemm(script);
  return measure(device, gemm, options);
}

// `count` operand sets, a fake GEMM each, on one fake device: what graph and kernel timing rotate over.
class OperandSets {
 public:
  OperandSets(Script& script, std::size_t count) : device_(script) {
    for (std::size_t i = 0; i < count; ++i) gemms_.push_back(std::make_unique<FakeGemm>(script));
    for (const auto& gemm : gemms_) sets_.push_back(gemm.get());
  }
  Measurement measure(kernels::TimingMode timing, MeasureOptions options) {
    options.timing = timing;
    return profiler::measure(device_, sets_, options);
  }
  const FakeGemm& operator[](std::size_t i) const { return *gemms_[i]; }
  const kernels::PreparedGemm* set(std::size_t i) const { return sets_[i]; }

 private:
  FakeDevice device_;
  std::vector<std::unique_ptr<FakeGemm>> gemms_;
  std::vector<kernels::PreparedGemm*> sets_;
};

TEST(Measure, ColdSteadyKernelConvergesAtMinSamplesWithAFlushBeforeEach) {
  Script script({250.0});
  MeasureOptions options;
  options.warmup_runs = 3;
  options.min_samples = 7;
  const Measurement m = run_with(script, options);
  EXPECT_TRUE(m.converged);
  EXPECT_EQ(m.samples, 7);
  EXPECT_EQ(script.flushes, 7);
  EXPECT_EQ(script.runs, 3 + 7);
  EXPECT_DOUBLE_EQ(m.median_us, 250.0);
  EXPECT_DOUBLE_EQ(m.timed_us_total, 7 * 250.0);
  EXPECT_FALSE(m.throttled);
  EXPECT_FALSE(m.clock_start.has_value());
}

TEST(Measure, ColdEventSamplesReachTheDeviceInGroupsAndStopWhereOneByOneWould) {
  // Noisy, then steady: the rule is met somewhere past min_samples, inside a group.
  std::deque<double> durations;
  for (int i = 0; i < 6; ++i) durations.push_back(i % 2 ? 90.0 : 110.0);
  for (int i = 0; i < 400; ++i) durations.push_back(100.0);
  MeasureOptions options;
  options.stopping_criterion = "stderr";  // the rule replayed one by one below
  options.warmup_runs = 0;
  options.min_samples = 5;
  options.max_seconds_per_point = 1e9;
  std::vector<double> seen;
  int expected_samples = 0;
  for (double duration : durations) {  // where the rule stops when it sees the samples one by one
    seen.push_back(duration);
    if (precise_enough(seen, options.min_samples, options.target_rel_stderr)) break;
  }
  expected_samples = int(seen.size());
  ASSERT_GT(expected_samples, options.min_samples);

  Script script(durations);
  const Measurement m = run_with(script, options);
  EXPECT_TRUE(m.converged);
  EXPECT_EQ(m.samples, expected_samples);
  double timed = 0;
  for (int i = 0; i < expected_samples; ++i) timed += durations[std::size_t(i)];
  EXPECT_DOUBLE_EQ(m.timed_us_total, timed);  // dropped samples are not timed time
  // Every run enqueued had its flush; at most a group's worth past the stop, several timers in flight.
  EXPECT_EQ(script.flushes, script.runs);
  EXPECT_GE(script.runs, expected_samples);
  EXPECT_LT(script.runs, expected_samples + 4);
  EXPECT_GE(script.timers, options.min_samples);
}

TEST(Measure, NoisyKernelStopsAtMaxSamplesUnconverged) {
  Script script;
  for (int i = 0; i < 100; ++i) script.durations_us.push_back(i % 2 ? 100.0 : 300.0);
  MeasureOptions options;
  options.max_samples = 40;
  options.max_seconds_per_point = 1e9;
  const Measurement m = run_with(script, options);
  EXPECT_FALSE(m.converged);
  EXPECT_EQ(m.samples, 40);
  EXPECT_DOUBLE_EQ(m.min_us, 100.0);
  EXPECT_DOUBLE_EQ(m.max_us, 300.0);
  EXPECT_GT(m.ci95_us, 0);
}

TEST(Measure, TimeCapStopsOnceMinSamplesAreIn) {
  Script script({100.0, 300.0});
  MeasureOptions options;
  options.min_samples = 6;
  options.max_seconds_per_point = 0;
  const Measurement m = run_with(script, options);
  EXPECT_EQ(m.samples, 6);
  EXPECT_FALSE(m.converged);
}

TEST(Measure, ShortHotKernelsAreTimedAsBatchesWithoutFlushing) {
  Script script({4.0});
  MeasureOptions options;
  options.hot = true;
  const Measurement m = run_with(script, options);
  EXPECT_EQ(script.flushes, 0);
  EXPECT_EQ(script.captures, 1);
  EXPECT_GE(script.batches, options.min_samples);
  // The single-launch probe and the replay that warms the graph are not samples.
  // The single-launch probe and the first replay (200 us: a short one warms up) are not samples.
  EXPECT_EQ(m.samples + 1, script.batches);
  const int launches_per_batch = script.batched_launches / script.batches;
  EXPECT_GT(launches_per_batch, 1);
  EXPECT_DOUBLE_EQ(m.median_us, 4.0);
  EXPECT_DOUBLE_EQ(m.timed_us_total, 4.0 + m.samples * launches_per_batch * 4.0);
}

TEST(Measure, LongHotKernelsAreStillTimedAsBatchesOfAtLeastTwo) {
  Script script({500.0});
  MeasureOptions options;
  options.hot = true;
  const Measurement m = run_with(script, options);
  EXPECT_EQ(script.flushes, 0);
  EXPECT_EQ(script.batched_launches, 2 * script.batches);
  EXPECT_EQ(m.samples, script.batches);  // the first replay (1 ms) is long enough to be a sample
}

TEST(Measure, GraphTimingReplaysEveryOperandSetInOrderAndReportsTimePerRun) {
  Script script({10.0, 20.0, 30.0});  // the sets take 10, 20, 30 us; the last repeats
  OperandSets sets(script, 3);
  MeasureOptions options;
  options.warmup_runs = 1;
  const Measurement m = sets.measure(kernels::TimingMode::graph, options);
  EXPECT_EQ(script.flushes, 0);  // the rotation, not a flush, keeps each set cold
  EXPECT_EQ(script.captures, 1);
  EXPECT_EQ(m.operand_sets, 3);
  // Replays hold at least four runs: the three sets, twice, in order.
  ASSERT_EQ(script.last_capture.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(script.last_capture[i], sets.set(i % 3));
  EXPECT_EQ(sets[0].runs, sets[1].runs);
  EXPECT_EQ(sets[1].runs, sets[2].runs);
  EXPECT_EQ(sets[0].runs, 1 + 2 * script.batches);  // one warm-up run, two per replay
  // The first replay (10, 20, 30, 30, 30, 30: 150 us, short) is an untimed warm-up; every later run takes 30.
  EXPECT_DOUBLE_EQ(m.min_us, 30.0);
  EXPECT_EQ(m.samples + 1, script.batches);
  EXPECT_DOUBLE_EQ(m.timed_us_total, m.samples * 6 * 30.0);
}

TEST(Measure, TheCallersRunOfTheFirstSetCountsTowardTheWarmUp) {
  MeasureOptions options;
  options.warmup_runs = 2;
  options.first_set_runs_done = 1;
  Script script({50.0});
  const Measurement m = run_with(script, options);
  EXPECT_EQ(script.runs, 1 + m.samples);

  Script graph_script({50.0});
  OperandSets sets(graph_script, 2);
  const Measurement graph = sets.measure(kernels::TimingMode::graph, options);
  EXPECT_EQ(sets[0].runs, 1 + 2 * graph_script.batches);  // brought to two runs by one warm-up run, two per replay
  EXPECT_EQ(sets[1].runs, 2 + 2 * graph_script.batches);
  EXPECT_EQ(graph.samples + 1, graph_script.batches);
}

TEST(Measure, GraphTimingRunsEverySetOnceBeforeTheCaptureEvenWithoutWarmUp) {
  Script script({50.0});
  OperandSets sets(script, 2);
  MeasureOptions options;
  options.warmup_runs = 0;
  options.first_set_runs_done = 1;
  const Measurement m = sets.measure(kernels::TimingMode::graph, options);
  EXPECT_EQ(sets[0].runs, 2 * script.batches);  // the caller's run was enough
  EXPECT_EQ(sets[1].runs, 1 + 2 * script.batches);
  EXPECT_GT(m.samples, 0);
}

TEST(Measure, GraphTimingOfOneLargeSetRepeatsItToFillAReplay) {
  Script script({500.0});
  MeasureOptions options;
  options.timing = kernels::TimingMode::graph;
  const Measurement m = run_with(script, options);
  EXPECT_EQ(m.operand_sets, 1);
  EXPECT_EQ(script.last_capture.size(), 4u);
  EXPECT_DOUBLE_EQ(m.median_us, 500.0);
  EXPECT_EQ(m.samples, script.batches);  // a long first replay (2 ms) is a sample: no untimed replay
  EXPECT_DOUBLE_EQ(m.timed_us_total, m.samples * 4 * 500.0);
}

TEST(Measure, HotGraphTimingUsesTheFirstSetOnly) {
  Script script({4.0});
  OperandSets sets(script, 2);
  MeasureOptions options;
  options.hot = true;
  const Measurement m = sets.measure(kernels::TimingMode::graph, options);
  EXPECT_EQ(m.operand_sets, 1);
  EXPECT_EQ(sets[1].runs, 0);
  EXPECT_EQ(script.flushes, 0);
}

TEST(Measure, KernelTimingFlushesAndTimesOneLaunchWithTheKernelTimer) {
  Script script({7.0});
  OperandSets sets(script, 2);
  MeasureOptions options;
  options.warmup_runs = 0;
  const Measurement m = sets.measure(kernels::TimingMode::kernel, options);
  EXPECT_EQ(script.kernel_timers, 1);
  EXPECT_EQ(script.captures, 0);
  EXPECT_EQ(script.flushes, m.samples);
  EXPECT_EQ(sets[0].runs, m.samples);
  EXPECT_EQ(sets[1].runs, 0);
  EXPECT_EQ(m.operand_sets, 1);
  EXPECT_DOUBLE_EQ(m.median_us, 7.0);
}

TEST(Measure, ClockDropBelow97PercentMarksThrottled) {
  Script script({100.0});
  script.clocks = {ClockSample{1980, 50, 500}, ClockSample{1900, 80, 700}};
  EXPECT_TRUE(run_with(script, {}).throttled);
  script.clocks = {ClockSample{1980, 50, 500}, ClockSample{1950, 60, 600}};
  const Measurement steady = run_with(script, {});
  EXPECT_FALSE(steady.throttled);
  ASSERT_TRUE(steady.clock_end.has_value());
  EXPECT_EQ(steady.clock_end->sm_clock_mhz, 1950);
}

std::vector<std::string> probes_and_flushes(const Script& script) {
  std::vector<std::string> log;
  for (const std::string& entry : script.device_log)
    if (entry == "probe" || entry == "flush") log.push_back(entry);
  return log;
}

TEST(Measure, ColdEventSamplesAreProbedBeforeTheFirstAndOncePerMillisecondOfSamplesBetweenFlushes) {
  std::deque<double> durations;
  for (int i = 0; i < 12; ++i) durations.push_back(i % 2 ? 500.0 : 300.0);
  Script script(durations);
  script.probe_mhz = 1425;
  MeasureOptions options;
  options.warmup_runs = 0;
  options.min_samples = 4;
  options.max_samples = 12;
  options.target_rel_stderr = 1e-9;  // never precise enough: all 12 samples, in groups of 4
  options.max_seconds_per_point = 1e9;
  const Measurement m = run_with(script, options);
  ASSERT_EQ(m.samples, 12);
  // The first group's times are unknown while it is enqueued: one probe after it. Later groups take the last
  // sample read (500 µs) for each of theirs: a probe after every second one.
  const std::vector<std::string> f4(4, "flush");
  std::vector<std::string> expected = {"probe"};
  expected.insert(expected.end(), f4.begin(), f4.end());
  for (int i = 0; i < 4; ++i) expected.insert(expected.end(), {"probe", "flush", "flush"});
  expected.push_back("probe");
  EXPECT_EQ(probes_and_flushes(script), expected);
  ASSERT_TRUE(m.probed_clock);
  EXPECT_EQ(m.probed_clock->probes, 6);
  EXPECT_DOUBLE_EQ(m.probed_clock->mean_mhz, 1425);
  EXPECT_EQ(script.probes_pending, 0);  // all collected

  // With warm-up runs, their wall time per run stands for the first group's samples (a fake run's: about 0).
  Script warmed(durations);
  warmed.probe_mhz = 1425;
  options.warmup_runs = 2;
  ASSERT_EQ(run_with(warmed, options).samples, 12);
  expected.erase(expected.begin() + 5);  // no probe right after the first group
  EXPECT_EQ(probes_and_flushes(warmed), expected);
}

TEST(Measure, GraphSamplesOfAMillisecondOrMoreAreEachFollowedByAProbe) {
  Script script({400.0});  // a replay of 4 runs: 1.6 ms
  script.probe_mhz = 1185;
  OperandSets sets(script, 1);
  MeasureOptions options;
  options.min_samples = options.max_samples = 5;
  const Measurement m = sets.measure(kernels::TimingMode::graph, options);
  ASSERT_EQ(m.samples, 5);
  ASSERT_TRUE(m.probed_clock);
  EXPECT_EQ(m.probed_clock->probes, 1 + 5);
  EXPECT_DOUBLE_EQ(m.probed_clock->lowest_mhz, 1185);
}

TEST(Measure, NoProbesWhenOffUnderKernelTimingOrWhereTheDeviceCannotProbe) {
  Script script({100.0});
  script.probe_mhz = 1425;
  EXPECT_TRUE(run_with(script, {}).probed_clock);
  const auto probes = [&] { return std::count(script.device_log.begin(), script.device_log.end(), "probe"); };
  const auto probed = probes();
  EXPECT_GE(probed, 2);  // before the first sample and after the first group
  MeasureOptions off;
  off.clock_probes = false;
  EXPECT_FALSE(run_with(script, off).probed_clock);
  OperandSets sets(script, 1);
  EXPECT_FALSE(sets.measure(kernels::TimingMode::kernel, {}).probed_clock);
  script.probe_mhz.reset();  // a device that cannot probe (the CPU, ROCm)
  EXPECT_FALSE(run_with(script, {}).probed_clock);
  EXPECT_EQ(probes(), probed);
}

}  // namespace
}  // namespace shapescope::profiler
