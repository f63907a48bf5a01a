// The power-cap columns from the device's throttle accounting: read around each point where
// `profile --power-accounting` asks for it, turned into the share of the point's time the power policy held
// the clock down, and left empty where it is not asked for or the device keeps no such accounting.
#include <gtest/gtest.h>

#include "fake_device.hpp"
#include "kernels/throttle_accounting.hpp"
#include "profiler/measure.hpp"
#include "profiler/point_record.hpp"
#include "profiler/repeat_sweep.hpp"

namespace shapescope::profiler {
namespace {

using kernels::PolicyHeldTime;
using kernels::ThrottleReading;

TEST(ThrottleAccounting, HeldShareIsTheCountersGrowthOverItsOwnTime) {
  EXPECT_DOUBLE_EQ(*kernels::held_share(PolicyHeldTime{10.0, 4.0}, PolicyHeldTime{10.5, 4.25}), 0.5);
  EXPECT_FALSE(kernels::held_share(std::nullopt, PolicyHeldTime{10.5, 4.2}));
  // A counter whose timestamp did not advance says nothing of the span.
  EXPECT_FALSE(kernels::held_share(PolicyHeldTime{10.0, 4.0}, PolicyHeldTime{10.0, 4.0}));
}

Measurement measured_on(testing_fakes::DeviceScript& script, bool power_accounting) {
  testing_fakes::FakeDevice device(script);
  const std::unique_ptr<kernels::PreparedGemm> gemm = device.empty_run();
  MeasureOptions options;
  options.warmup_runs = 0;
  options.min_samples = options.max_samples = 3;
  options.power_accounting = power_accounting;
  return measure(device, *gemm, options);
}

ProfileRow recorded(const Measurement& m) {
  ProfileRow row;
  record_measurement(row, m, kernels::CheckResult{}, 1e9, 1e6, kernels::kCheckThreshold);
  return row;
}

// Start and end of a point: 20 ms apart by the driver's stamps, 15 ms of them held by the power policy; the
// board's limit 700 W.
std::deque<ThrottleReading> capped_three_quarters() {
  return {ThrottleReading{PolicyHeldTime{100.000, 7.0}, 700}, ThrottleReading{PolicyHeldTime{100.020, 7.015}, 700}};
}

TEST(ThrottleAccounting, APointRecordsTheShareOfItsTimeAtThePowerLimit) {
  testing_fakes::DeviceScript script;
  script.throttle = capped_three_quarters();
  const Measurement m = measured_on(script, true);
  ASSERT_TRUE(m.throttle_start && m.throttle_end);
  const ProfileRow row = recorded(m);
  ASSERT_TRUE(row.power_capped_pct);
  EXPECT_NEAR(*row.power_capped_pct, 75.0, 1e-6);
  EXPECT_EQ(row.power_limit_w, 700.0);
}

TEST(ThrottleAccounting, UnaskedOrWithoutAccountingTheColumnsStayEmpty) {
  testing_fakes::DeviceScript script;
  script.throttle = capped_three_quarters();
  // Not asked for: the device is not read (a reading costs 0.4-0.7 ms on an H100).
  const Measurement unasked = measured_on(script, false);
  EXPECT_FALSE(unasked.throttle_start);
  EXPECT_EQ(script.throttle.size(), 2u);
  EXPECT_FALSE(recorded(unasked).power_capped_pct);
  // A device that keeps no accounting (the CPU, ROCm).
  script.throttle.clear();
  const ProfileRow row = recorded(measured_on(script, true));
  EXPECT_FALSE(row.power_capped_pct);
  EXPECT_FALSE(row.power_limit_w);
  // A driver with the counter but not the limit: the share alone.
  script.throttle = {ThrottleReading{PolicyHeldTime{1.0, 0.0}, 0}, ThrottleReading{PolicyHeldTime{1.1, 0.01}, 0}};
  const ProfileRow partial = recorded(measured_on(script, true));
  ASSERT_TRUE(partial.power_capped_pct);
  EXPECT_NEAR(*partial.power_capped_pct, 10.0, 1e-9);
  EXPECT_FALSE(partial.power_limit_w);
}

TEST(ThrottleAccounting, RepeatedPassesKeepTheMostCappedShare) {
  ProfileRow pass;
  pass.kernel_time_us = pass.time_us_min = pass.time_us_max = 10;
  pass.samples = 5;
  ProfileRow capped = pass, free = pass, unknown = pass;
  capped.power_capped_pct = 80;
  capped.power_limit_w = 700;
  free.power_capped_pct = 5;
  free.power_limit_w = 700;
  const ProfileRow combined = combine_passes({free, capped, unknown});
  ASSERT_TRUE(combined.power_capped_pct);
  EXPECT_EQ(*combined.power_capped_pct, 80);
  EXPECT_EQ(combined.power_limit_w, 700.0);
  EXPECT_FALSE(combine_passes({pass, unknown}).power_capped_pct);
}

}  // namespace
}  // namespace shapescope::profiler
