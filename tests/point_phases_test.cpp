// Where a point's wall time goes: the ledger's per-point medians and sums, its JSON and table, and the
// phases a real sweep on the CPU backend records (they add up to the points' wall time).
#include <gtest/gtest.h>

#include <filesystem>

#include "kernels/kernel.hpp"
#include "profiler/point_phases.hpp"
#include "profiler/sidecar.hpp"
#include "profiler/summary_table.hpp"
#include "profiler/sweep_runner.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope::profiler {
namespace {

namespace fs = std::filesystem;

PointPhases point(double prepare_s, double check_s, double timed_s, double wall_s) {
  PointPhases phases;
  phases[PointPhase::prepare] = prepare_s;
  phases[PointPhase::check] = check_s;
  phases[PointPhase::timed] = timed_s;
  phases.close(wall_s);
  return phases;
}

TEST(PointPhases, OtherIsWhatTheNamedPhasesLeaveOfTheWallTime) {
  const PointPhases phases = point(0.001, 0.002, 0.004, 0.010);
  EXPECT_NEAR(phases[PointPhase::other], 0.003, 1e-12);
  EXPECT_NEAR(phases.wall_s(), 0.010, 1e-12);
  EXPECT_NEAR(phases.overhead_s(), 0.006, 1e-12);
  // Clock noise never makes it negative.
  EXPECT_EQ(point(0.001, 0.002, 0.004, 0.005)[PointPhase::other], 0);
}

TEST(PhaseLedger, MediansAreOverPointsAndTotalsOverTheSweep) {
  PhaseLedger ledger;
  ledger.add(point(0.001, 0.010, 0.002, 0.020));
  ledger.add(point(0.003, 0.030, 0.001, 0.040));
  PhaseLedger more;
  more.add(point(0.002, 0.020, 0.003, 0.030));
  ledger.merge(more);
  EXPECT_EQ(ledger.points(), 3);
  EXPECT_NEAR(ledger.median_ms(PointPhase::prepare), 2.0, 1e-9);
  EXPECT_NEAR(ledger.median_ms(PointPhase::check), 20.0, 1e-9);
  EXPECT_NEAR(ledger.median_wall_ms(), 30.0, 1e-9);
  EXPECT_NEAR(ledger.median_overhead_ms(), 27.0, 1e-9);  // 18, 39, 27 ms
  EXPECT_NEAR(ledger.total_s(PointPhase::check), 0.060, 1e-12);
  EXPECT_NEAR(ledger.total_wall_s(), 0.090, 1e-12);

  const nlohmann::json json = ledger.to_json();
  EXPECT_EQ(json["points"], 3);
  EXPECT_NEAR(json["median_overhead_ms"].get<double>(), 27.0, 1e-9);
  EXPECT_NEAR(json["phases"]["check"]["total_s"].get<double>(), 0.060, 1e-12);
  ASSERT_EQ(json["phases"].size(), kPointPhaseCount);

  const std::string table = ledger.table();
  EXPECT_NE(table.find("3 points"), std::string::npos) << table;
  EXPECT_NE(table.find("median overhead (wall - timed) 27.00 ms"), std::string::npos) << table;
  EXPECT_NE(table.find("between_samples"), std::string::npos) << table;
  EXPECT_EQ(PhaseLedger().table(), "");
}

TEST(PhaseLedger, AnEvenCountTakesTheMeanOfTheMiddleTwo) {
  PhaseLedger ledger;
  for (double check_s : {0.004, 0.001, 0.003, 0.002}) ledger.add(point(0, check_s, 0, 0.010));
  EXPECT_NEAR(ledger.median_ms(PointPhase::check), 2.5, 1e-9);
}

TEST(PointPhasesOnCpu, ASweepRecordsWhereEachPointsTimeWentInTheSidecarAndTheSummary) {
  kernels::register_cpu_kernels();
  const std::unique_ptr<kernels::Device> device = kernels::make_cpu_device(1);
  SweepPlan plan;
  plan.problems = {GemmProblem{"toy", "up_proj", 1, 256, 256, 1}};
  plan.kernels = {"cpu_fp8_blockscale"};
  plan.m_values = {1, 8, 64};
  const testing_support::ScratchDir scratch;
  plan.out_dir = scratch.path();
  plan.peak_override_tflops = 1;
  plan.measure.warmup_runs = 1;
  plan.measure.min_samples = 3;
  plan.measure.max_samples = 3;
  const SweepResult result = run_sweep(*device, plan);
  ASSERT_EQ(result.files.size(), 1u);
  EXPECT_EQ(result.phases.points(), 3);
  for (PointPhase phase : {PointPhase::prepare, PointPhase::check, PointPhase::warm_up, PointPhase::timed})
    EXPECT_GT(result.phases.total_s(phase), 0) << phase_name(phase);
  // The points fill the sweep's wall time (the rest is between points: the final flush).
  EXPECT_LE(result.phases.total_wall_s(), result.timing.wall_s * 1.0001);
  EXPECT_NEAR(result.phases.total_s(PointPhase::timed), result.timing.timed_s, 1e-9);

  const nlohmann::json sidecar = *read_sidecar(result.files[0].csv);
  const nlohmann::json& phases = sidecar["sweep"]["point_phases"];
  EXPECT_EQ(phases["points"], 3);
  EXPECT_NEAR(phases["phases"]["check"]["total_s"].get<double>(), result.phases.total_s(PointPhase::check), 1e-12);
  EXPECT_NE(summary_table(result).find("median overhead (wall - timed)"), std::string::npos);
}

}  // namespace
}  // namespace shapescope::profiler
