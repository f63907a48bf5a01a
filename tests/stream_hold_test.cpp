// Cold event samples enqueued behind a stream hold (kernels/stream_hold.hpp, nvbench's blocking kernel), on a
// scripted fake device that logs what is enqueued: the hold comes before a batch's first flush and its release
// after the batch's last stop event, whatever ends the batch; other timings and --blocking-kernel off hold
// nothing; a hold that times out is counted, halves the later batches and is noted on the point's row.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/interrupt.hpp"
#include "fake_device.hpp"
#include "profiler/measure.hpp"
#include "profiler/point_record.hpp"

namespace shapescope::profiler {
namespace {

using testing_fakes::DeviceScript;
using testing_fakes::FakeDevice;

// Logs its runs beside the device's log; on its `stop_at`-th run it pretends a signal came (or throws).
class LoggedGemm final : public kernels::PreparedGemm {
 public:
  LoggedGemm(DeviceScript& script, int stop_at = 0, bool throws = false)
      : script_(script), stop_at_(stop_at), throws_(throws) {}
  void run() override {
    script_.device_log.push_back("run");
    if (++runs_ != stop_at_) return;
    if (throws_) throw std::runtime_error("the run failed");
    set_interrupt_requested(true);
  }
  kernels::CheckResult check() override { return {}; }
  std::string launch_name() const override { return "logged"; }
  double min_bytes() const override { return 1; }

 private:
  DeviceScript& script_;
  int runs_ = 0, stop_at_ = 0;
  bool throws_ = false;
};

class StreamHoldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    set_interrupt_requested(false);
    script.durations_us = {100.0};
    script.log_timers = true;
    options.warmup_runs = 0;
    options.clock_probes = false;
    options.max_seconds_per_point = 1e9;
  }
  void TearDown() override { set_interrupt_requested(false); }

  Measurement measured(LoggedGemm& gemm) {
    FakeDevice device(script);
    return measure(device, gemm, options);
  }
  // What reached the device's stream, without the host's waits.
  std::vector<std::string> enqueued() const {
    std::vector<std::string> log;
    std::copy_if(script.device_log.begin(), script.device_log.end(), std::back_inserter(log),
                 [](const std::string& entry) { return entry != "synchronize"; });
    return log;
  }
  static std::vector<std::string> held(const std::vector<int>& batches) {
    std::vector<std::string> log;
    for (const int samples : batches) {
      log.push_back("hold");
      for (int i = 0; i < samples; ++i) log.insert(log.end(), {"flush", "start", "run", "stop"});
      log.push_back("release");
    }
    return log;
  }

  DeviceScript script;
  MeasureOptions options = held_options();

 private:
  static MeasureOptions held_options() {
    MeasureOptions held;
    held.blocking_kernel = true;  // --blocking-kernel on (off by default)
    return held;
  }
};

TEST_F(StreamHoldTest, AGroupOfColdEventSamplesIsEnqueuedBetweenAHoldAndItsRelease) {
  options.min_samples = 5;  // a steady kernel: one group of 5
  LoggedGemm gemm(script);
  const Measurement m = measured(gemm);
  EXPECT_EQ(m.samples, 5);
  EXPECT_EQ(enqueued(), held({5}));
  EXPECT_EQ(m.holds, 1);
  EXPECT_EQ(m.timed_out_holds, 0);
}

TEST_F(StreamHoldTest, AGroupLargerThanAHoldsBatchIsHeldInBatchesOfAtMostEight) {
  options.min_samples = 20;  // the first group: 20 samples
  LoggedGemm gemm(script);
  const Measurement m = measured(gemm);
  EXPECT_EQ(m.samples, 20);
  EXPECT_EQ(enqueued(), held({8, 8, 4}));
  EXPECT_EQ(m.holds, 3);
}

TEST_F(StreamHoldTest, AnInterruptMidGroupReleasesTheHoldAfterTheLastSampleEnqueued) {
  options.min_samples = 6;
  LoggedGemm gemm(script, 2);  // the signal comes during the second run
  const Measurement m = measured(gemm);
  EXPECT_TRUE(m.interrupted);
  EXPECT_EQ(enqueued(), held({2}));
}

TEST_F(StreamHoldTest, ARunThatThrowsStillReleasesTheHold) {
  options.min_samples = 6;
  LoggedGemm gemm(script, 3, true);
  EXPECT_THROW(measured(gemm), std::runtime_error);
  EXPECT_EQ(script.holds, 1);
  EXPECT_EQ(script.releases, 1);
  EXPECT_EQ(script.device_log.back(), "release");
}

TEST_F(StreamHoldTest, NothingIsHeldUnderGraphOrKernelTimingHotOrBlockingKernelOff) {
  options.min_samples = options.max_samples = 5;
  for (const kernels::TimingMode timing : {kernels::TimingMode::graph, kernels::TimingMode::kernel}) {
    options.timing = timing;
    LoggedGemm gemm(script);
    EXPECT_EQ(measured(gemm).holds, 0) << kernels::to_string(timing);
  }
  options.timing = kernels::TimingMode::events;
  options.hot = true;
  LoggedGemm hot(script);
  EXPECT_EQ(measured(hot).holds, 0);
  options.hot = false;
  options.blocking_kernel = false;
  LoggedGemm off(script);
  EXPECT_EQ(measured(off).holds, 0);
  EXPECT_EQ(script.holds, 0);
  EXPECT_EQ(script.releases, 0);
  EXPECT_FALSE(holds_stream(options));
  options.blocking_kernel = true;
  EXPECT_TRUE(holds_stream(options));
  EXPECT_FALSE(holds_stream(MeasureOptions{})) << "off by default until measured on a GPU";
}

TEST_F(StreamHoldTest, ATimedOutHoldIsCountedHalvesTheLaterBatchesAndIsNotedOnTheRow) {
  script.holds_to_time_out = 2;
  script.durations_us = {90, 110, 90, 110, 90, 110, 90, 110, 90, 110, 90, 110,
                         90, 110, 90, 110, 90, 110, 90, 110, 90, 110, 90, 110};
  options.min_samples = 8;
  options.max_samples = 24;
  options.target_rel_stderr = 1e-9;  // never precise enough: 8, then groups of 4
  LoggedGemm gemm(script);
  const Measurement m = measured(gemm);
  ASSERT_EQ(m.samples, 24);
  // 8 held at once and timed out: 4 at once, timed out again: 2 at once from then on.
  EXPECT_EQ(enqueued(), held({8, 4, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(m.holds, 8);
  EXPECT_EQ(m.timed_out_holds, 2);
  ProfileRow row;
  record_measurement(row, m, kernels::CheckResult{}, 1e9, 1e6, kernels::kCheckThreshold);
  EXPECT_EQ(row.status, kStatusOk);  // timed as without a hold: measured all the same
  EXPECT_EQ(row.note, "2 of 8 stream holds timed out (their samples may include host enqueue time)");
}

}  // namespace
}  // namespace shapescope::profiler
