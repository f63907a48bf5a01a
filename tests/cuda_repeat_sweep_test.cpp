// --repeat R and the steady-clock warm-up (profiler/repeat_sweep.hpp), on the CPU
// with hand-made rows and a scripted fake device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "profiler/repeat_sweep.hpp"

namespace shapescope::profiler {
namespace {

std::vector<int64_t> ms_of_pass(const std::vector<ScheduledPoint>& schedule, int pass) {
  std::vector<int64_t> ms;
  for (const ScheduledPoint& point : schedule)
    if (point.pass == pass) ms.push_back(point.m);
  return ms;
}

TEST(CudaRepeatSweep, OnePassKeepsTheGivenOrder) {
  const std::vector<int64_t> ms = {1, 2, 4, 8, 16};
  const auto schedule = repeat_schedule(ms, 1, 42);
  EXPECT_EQ(ms_of_pass(schedule, 0), ms);
  EXPECT_EQ(schedule.size(), ms.size());
}

TEST(CudaRepeatSweep, PassesRunOneAfterAnotherEachAShuffledPermutation) {
  std::vector<int64_t> ms;
  for (int64_t m = 16; m <= 512; m += 16) ms.push_back(m);
  const auto schedule = repeat_schedule(ms, 3, 7);
  ASSERT_EQ(schedule.size(), 3 * ms.size());
  for (std::size_t i = 1; i < schedule.size(); ++i) EXPECT_LE(schedule[i - 1].pass, schedule[i].pass);
  std::set<std::vector<int64_t>> orders;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<int64_t> order = ms_of_pass(schedule, pass);
    orders.insert(order);
    EXPECT_NE(order, ms) << "pass " << pass << " kept the sorted order";
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, ms) << "pass " << pass << " is not a permutation";
  }
  EXPECT_EQ(orders.size(), 3u);
  EXPECT_EQ(ms_of_pass(repeat_schedule(ms, 3, 7), 1), ms_of_pass(schedule, 1));  // seeded: reproducible
}

ProfileRow pass_row(double time_us, double ci95_us, int64_t samples, double clock_mhz) {
  ProfileRow row;
  row.batch = row.m = 64;
  row.kernel_time_us = time_us;
  row.tflops = 100.0 / time_us;  // the same work in every pass
  row.utils = row.tflops / 1000.0;
  row.gbytes_per_s = 50.0 / time_us;
  row.ci95_us = ci95_us;
  row.samples = samples;
  row.sm_clock_mhz = clock_mhz;
  row.sm_clock_end_mhz = clock_mhz - 10;
  row.temperature_c = clock_mhz / 40;
  row.power_w = clock_mhz / 4;
  row.rel_err = 1e-3 * time_us;
  return row;
}

TEST(CudaRepeatSweep, CombinedRowKeepsTheMedianAndTheSpreadOverPasses) {
  const ProfileRow combined =
      combine_passes({pass_row(10, 0.1, 5, 1980), pass_row(30, 0.2, 7, 1900), pass_row(12, 0.1, 6, 1950)});
  EXPECT_DOUBLE_EQ(combined.kernel_time_us, 12);
  EXPECT_DOUBLE_EQ(combined.time_us_min, 10);
  EXPECT_DOUBLE_EQ(combined.time_us_max, 30);
  // Sample standard deviation of {10, 12, 30}: mean 52/3.
  const double mean = 52.0 / 3;
  const double stddev = std::sqrt(((10 - mean) * (10 - mean) + (12 - mean) * (12 - mean) + (30 - mean) * (30 - mean)) / 2);
  EXPECT_NEAR(combined.time_us_stddev, stddev, 1e-12);
  EXPECT_NEAR(combined.ci95_us, 4.3027 * stddev / std::sqrt(3.0), 1e-3);  // t(2 dof) over passes
  EXPECT_NEAR(combined.tflops, 100.0 / 12, 1e-12);
  EXPECT_NEAR(combined.utils, 0.1 / 12, 1e-12);
  EXPECT_NEAR(combined.gbytes_per_s, 50.0 / 12, 1e-12);
  EXPECT_EQ(combined.passes, 3);
  EXPECT_EQ(combined.samples, 18);
  EXPECT_DOUBLE_EQ(combined.rel_err, 0.03);
  EXPECT_DOUBLE_EQ(combined.sm_clock_mhz, 1900);
  EXPECT_DOUBLE_EQ(combined.sm_clock_end_mhz, 1890);
  EXPECT_DOUBLE_EQ(combined.temperature_c, 1980.0 / 40);
  EXPECT_DOUBLE_EQ(combined.power_w, 1980.0 / 4);
  EXPECT_EQ(combined.status, kStatusOk);
}

TEST(CudaRepeatSweep, WithinPassUncertaintyIsNeverHidden) {
  const ProfileRow combined = combine_passes({pass_row(10, 3.0, 5, 1980), pass_row(10, 0.1, 5, 1980)});
  EXPECT_DOUBLE_EQ(combined.ci95_us, 3.0);  // identical medians, but one pass was noisy
}

TEST(CudaRepeatSweep, AFailingOrThrottledPassMarksThePoint) {
  ProfileRow failed = pass_row(11, 0.1, 5, 1980);
  failed.status = kStatusNumericalFail;
  failed.note = "rel_err 0.5 above 0.01";
  const ProfileRow combined = combine_passes({pass_row(10, 0.1, 5, 1980), failed});
  EXPECT_EQ(combined.status, kStatusNumericalFail);
  EXPECT_EQ(combined.note, failed.note);
  EXPECT_EQ(combined.passes, 2);

  ProfileRow throttled = pass_row(11, 0.1, 5, 1500);
  throttled.status = kStatusThrottled;
  throttled.note = "clock fell";
  EXPECT_EQ(combine_passes({pass_row(10, 0.1, 5, 1980), throttled}).status, kStatusThrottled);
  EXPECT_THROW(combine_passes({}), std::invalid_argument);
}

TEST(CudaRepeatSweep, PointsBelowTheSteadyClockAreFlagged) {
  ProfileRow row = pass_row(10, 0.1, 5, 1980);
  flag_off_steady_clock(row, 1980);
  EXPECT_EQ(row.status, kStatusOk);
  row.sm_clock_end_mhz = 1800;  // fell during the point
  flag_off_steady_clock(row, 1980);
  EXPECT_EQ(row.status, kStatusThrottled);
  EXPECT_NE(row.note.find("1800"), std::string::npos);
  ProfileRow failed = pass_row(10, 0.1, 5, 1000);
  failed.status = kStatusError;
  flag_off_steady_clock(failed, 1980);
  EXPECT_EQ(failed.status, kStatusError);  // a failure stays a failure
}

// A device whose clock reads from a script, one reading per sample_clock().
class ScriptedClockDevice final : public kernels::Device {
 public:
  explicit ScriptedClockDevice(std::vector<double> clocks) : clocks_(std::move(clocks)) {}
  kernels::BackendKind kind() const override { return kernels::BackendKind::cpu; }
  kernels::DeviceInfo info() const override { return {}; }
  std::unique_ptr<kernels::Timer> make_timer() override { return nullptr; }
  void flush_cache() override {}
  void synchronize() override {}
  std::size_t free_memory_bytes() const override { return 0; }
  std::optional<kernels::ClockSample> sample_clock() const override {
    if (clocks_.empty()) return std::nullopt;
    const double clock = clocks_[std::min(next_++, clocks_.size() - 1)];
    return kernels::ClockSample{clock, 60, 500};
  }
  std::unique_ptr<kernels::RunSequence> capture(const std::vector<kernels::PreparedGemm*>&) override { return nullptr; }
  std::unique_ptr<kernels::Timer> make_kernel_timer() override { return nullptr; }
  std::unique_ptr<kernels::PreparedGemm> empty_run() override { return nullptr; }
  std::size_t readings() const { return next_; }

 private:
  std::vector<double> clocks_;
  mutable std::size_t next_ = 0;
};

class CountingGemm final : public kernels::PreparedGemm {
 public:
  void run() override { ++runs; }
  kernels::CheckResult check() override { return {}; }
  std::string launch_name() const override { return "counting"; }
  double min_bytes() const override { return 0; }
  int64_t runs = 0;
};

TEST(CudaRepeatSweep, WarmUpRunsUntilThreeWindowsAgree) {
  ScriptedClockDevice device({1980, 1900, 1850, 1800, 1795, 1790, 1700});
  CountingGemm gemm;
  const SteadyClock steady = warm_until_clock_settles(device, gemm, {0.001, 0.01, 10});
  EXPECT_TRUE(steady.reached);
  EXPECT_EQ(device.readings(), 6u);  // 1800, 1795, 1790 are within 1%
  ASSERT_TRUE(steady.settled.has_value());
  EXPECT_DOUBLE_EQ(steady.settled->sm_clock_mhz, 1790);
  EXPECT_GT(gemm.runs, 0);
}

TEST(CudaRepeatSweep, WarmUpGivesUpWithoutAClockOrAfterItsLimit) {
  ScriptedClockDevice silent({});
  CountingGemm gemm;
  const SteadyClock none = warm_until_clock_settles(silent, gemm, {0.001, 0.01, 10});
  EXPECT_FALSE(none.reached);
  EXPECT_FALSE(none.settled.has_value());

  std::vector<double> oscillating;
  for (int i = 0; i < 100000; ++i) oscillating.push_back(i % 2 ? 1500 : 2000);
  ScriptedClockDevice drifting(oscillating);
  const SteadyClock gave_up = warm_until_clock_settles(drifting, gemm, {0.001, 0.01, 0.05});
  EXPECT_FALSE(gave_up.reached);
  EXPECT_GE(gave_up.seconds, 0.05);
}

}  // namespace
}  // namespace shapescope::profiler
