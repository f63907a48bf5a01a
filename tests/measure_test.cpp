// The measurement core against a scripted fake device: which calls it makes
// (flushes, timers, batches, clocks) and when it stops.
#include <gtest/gtest.h>

#include "fake_device.hpp"
#include "profiler/measure.hpp"

namespace shapescope::profiler {
namespace {

using kernels::ClockSample;
using testing_fakes::DeviceScript;
using testing_fakes::FakeDevice;

// Counts the runs of the measured GEMM.
struct Script : DeviceScript {
  int runs = 0;
};

class FakeGemm final : public kernels::PreparedGemm {
 public:
  explicit FakeGemm(Script& script) : script_(script) {}
  void run() override { ++script_.runs; }
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

TEST(Measure, ColdSteadyKernelConvergesAtMinSamplesWithAFlushBeforeEach) {
  Script script;
  script.durations_us = {250.0};
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

TEST(Measure, NoisyKernelStopsAtMaxSamplesUnconverged) {
  Script script;
  script.durations_us.clear();
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
  Script script;
  script.durations_us = {100.0, 300.0};
  MeasureOptions options;
  options.min_samples = 6;
  options.max_seconds_per_point = 0;
  const Measurement m = run_with(script, options);
  EXPECT_EQ(m.samples, 6);
  EXPECT_FALSE(m.converged);
}

TEST(Measure, ShortHotKernelsAreTimedAsBatchesWithoutFlushing) {
  Script script;
  script.durations_us = {4.0};
  MeasureOptions options;
  options.hot = true;
  const Measurement m = run_with(script, options);
  EXPECT_EQ(script.flushes, 0);
  EXPECT_GE(script.batches, options.min_samples);
  EXPECT_EQ(m.samples, script.batches);  // the single-launch probe is not a sample
  EXPECT_GT(script.batched_launches, script.batches);
  EXPECT_DOUBLE_EQ(m.median_us, 4.0);
  EXPECT_DOUBLE_EQ(m.timed_us_total, 4.0 + script.batched_launches * 4.0);
}

TEST(Measure, LongHotKernelsAreStillTimedAsBatchesOfAtLeastTwo) {
  Script script;
  script.durations_us = {500.0};
  MeasureOptions options;
  options.hot = true;
  const Measurement m = run_with(script, options);
  EXPECT_EQ(script.flushes, 0);
  EXPECT_EQ(m.samples, script.batches);
  EXPECT_EQ(script.batched_launches, 2 * script.batches);
}

TEST(Measure, ClockDropBelow97PercentMarksThrottled) {
  Script script;
  script.durations_us = {100.0};
  script.clocks = {ClockSample{1980, 50, 500}, ClockSample{1900, 80, 700}};
  EXPECT_TRUE(run_with(script, {}).throttled);
  script.clocks = {ClockSample{1980, 50, 500}, ClockSample{1950, 60, 600}};
  const Measurement steady = run_with(script, {});
  EXPECT_FALSE(steady.throttled);
  ASSERT_TRUE(steady.clock_end.has_value());
  EXPECT_EQ(steady.clock_end->sm_clock_mhz, 1950);
}

}  // namespace
}  // namespace shapescope::profiler
