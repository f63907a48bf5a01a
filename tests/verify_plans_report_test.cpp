// Reading the analyzer's JSON report back for `profile --verify-plans` (CPU side;
// the GPU test runs the plans). The report's plan objects come from the analyzer's
// own plan_json, so a change of its schema breaks this test.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "analyze/json_report.hpp"
#include "common/user_error.hpp"
#include "profiler/verify_plans.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope::profiler {
namespace {

using nlohmann::json;

json anomaly(int64_t m, double time_us, const std::optional<analyze::SplitPlan>& best) {
  return {{"m", m}, {"time_us", time_us}, {"best_plan", best ? analyze::plan_json(*best) : json(nullptr)}};
}

analyze::SplitPlan plan(analyze::PlanKind kind, std::vector<int64_t> parts, double predicted_us, double gain) {
  analyze::SplitPlan p;
  p.kind = kind;
  p.parts = std::move(parts);
  p.predicted_us = predicted_us;
  p.gain = gain;
  return p;
}

std::string write_report(const testing_support::ScratchDir& scratch, const json& report) {
  return scratch.write("report.json", report.dump()).string();
}

TEST(VerifyPlansReport, ReadsBestPlansLargestGainFirstAndCapsEachSeries) {
  const json report = {
      {"series",
       {{{"name", "gate_up"},
         {"kernel", "cublaslt_bf16"},
         {"n", 14336},
         {"k", 4096},
         {"batch_count", 1},
         {"anomalies",
          {anomaly(2180, 240, plan(analyze::PlanKind::study_pair, {1088, 1092}, 190, 0.21)),
           anomaly(2200, 250, std::nullopt),
           anomaly(3000, 300, plan(analyze::PlanKind::pad_up, {3072}, 210, 0.30)),
           anomaly(4000, 400, plan(analyze::PlanKind::halves, {2000, 2000}, 380, 0.05))}}},
        {{"name", "other"}, {"kernel", "cublaslt_fp8_blockscale"}, {"n", 7168}, {"k", 2304}, {"anomalies", json::array()}}}}};
  const testing_support::ScratchDir scratch;
  const std::vector<ReportedPlan> plans = read_reported_plans(write_report(scratch, report), 2);
  ASSERT_EQ(plans.size(), 2u);  // the plan-less anomaly is skipped, the smallest gain cut
  EXPECT_EQ(plans[0].m, 3000);
  EXPECT_EQ(plans[0].kind, "pad_up");
  EXPECT_EQ(plans[0].parts, std::vector<int64_t>{3072});
  EXPECT_DOUBLE_EQ(plans[0].reported_gain_pct, 30);
  EXPECT_EQ(plans[1].m, 2180);
  EXPECT_EQ(plans[1].parts, (std::vector<int64_t>{1088, 1092}));
  EXPECT_EQ(plans[1].kernel, "cublaslt_bf16");
  EXPECT_EQ(plans[1].n, 14336);
  EXPECT_EQ(plans[1].k, 4096);
  EXPECT_DOUBLE_EQ(plans[1].reported_predicted_us, 190);
}

TEST(VerifyPlansReport, RejectsFilesThatAreNotReports) {
  const testing_support::ScratchDir scratch;
  const std::string not_json = write_report(scratch, json::array());
  EXPECT_THROW(read_reported_plans(not_json, 10), UserError);
  std::ofstream(not_json) << "{ broken";
  EXPECT_THROW(read_reported_plans(not_json, 10), UserError);
  EXPECT_THROW(read_reported_plans("/nonexistent/report.json", 10), UserError);
}

TEST(VerifyPlansReport, DefaultOutputSitsBesideTheReport) {
  EXPECT_EQ(default_verify_output("out/report.json"), "out/report.verify.json");
  EXPECT_EQ(default_verify_output("report"), "report.verify.json");
}

}  // namespace
}  // namespace shapescope::profiler
