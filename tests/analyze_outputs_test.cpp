#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "analyze/analysis.hpp"
#include "analyze/json_report.hpp"
#include "analyze/python_float.hpp"
#include "analyze/study_outputs.hpp"
#include "analyze_test_support.hpp"
#include "common/csv.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {
namespace {

using testing::make_series;

TEST(PythonRepr, WritesNumbersAsPandasDoes) {
  // Expected strings are Python 3's repr() of the same doubles.
  EXPECT_EQ(python_repr(130.0), "130.0");
  EXPECT_EQ(python_repr(239.38), "239.38");
  EXPECT_EQ(python_repr(0.00566), "0.00566");
  EXPECT_EQ(python_repr(0.0001), "0.0001");
  EXPECT_EQ(python_repr(0.00001), "1e-05");
  EXPECT_EQ(python_repr(1.5e-7), "1.5e-07");
  EXPECT_EQ(python_repr(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(python_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_repr(1e16), "1e+16");
  EXPECT_EQ(python_repr(1.2345e22), "1.2345e+22");
  EXPECT_EQ(python_repr(0.0), "0.0");
  EXPECT_EQ(python_repr(-2.5), "-2.5");
  EXPECT_EQ(python_repr(123456789.125), "123456789.125");
  EXPECT_EQ(python_repr(1e300 * 1e300), "inf");
}

// An anomaly at M=12 (slower than 4 + 8) and one at M=16 (slower than 8 + 8).
Series planted_series() { return make_series({{4, 10}, {8, 12}, {12, 40}, {16, 45}, {20, 30}}); }

// The study's rule (the planted series is too short for the noise-aware window), with plans.
AnalysisOptions study_rule_with_plans() {
  AnalysisOptions options;
  options.rule = AnomalyRule::study;
  options.check_split = true;
  return options;
}

TEST(AnalysisOptions, DefaultRuleIsTheNoiseAwareOneAsOnTheCommandLine) {
  EXPECT_EQ(AnalysisOptions{}.rule, AnomalyRule::noise_aware);
  // One lucky point in a flat sweep: the study's rule flags every later M, the noise-aware rule none.
  std::vector<std::pair<int64_t, double>> points;
  for (int64_t m = 16; m <= 640; m += 16) points.push_back({m, m == 320 ? m / 1.3 : double(m)});
  const Series series = make_series(points);
  ASSERT_EQ(find_anomalies(series, AnomalyRule::study, {}).size(), 20u);
  EXPECT_TRUE(find_anomalies(series, AnomalyRule::noise_aware, {}).empty());
  EXPECT_TRUE(analyze_series(series, AnalysisOptions{}, MWeights()).findings.empty());
}

TEST(StudyOutputs, WritesTheStudysColumnsForAnomaliesAndPairs) {
  const Series series = planted_series();
  const SeriesAnalysis analysis = analyze_series(series, study_rule_with_plans(), MWeights());
  const csv::Table low = csv::parse(low_utils_csv(analysis), "low");
  EXPECT_EQ(low.header, (std::vector<std::string>{"batch", "kernel_time", "flops", "utils"}));
  ASSERT_EQ(low.rows.size(), 2u);
  EXPECT_EQ(low.rows[0][0], "12");
  EXPECT_EQ(low.rows[0][1], "40.0");
  EXPECT_EQ(std::stod(low.rows[0][3]), series.points[2].utils);

  const csv::Table split = csv::parse(split_gemm_csv(analysis), "split");
  EXPECT_EQ(split.header, (std::vector<std::string>{"batch", "kernel_time", "row1_batch", "row1_time", "row2_batch",
                                                    "row2_time"}));
  ASSERT_EQ(split.rows.size(), 1u);  // 16 = 8 + 8 is halves, not a study pair
  EXPECT_EQ(split.rows[0], (std::vector<std::string>{"12", "40.0", "4", "10.0", "8", "12.0"}));
  ASSERT_TRUE(analysis.findings[1].best.has_value());
  EXPECT_EQ(analysis.findings[1].best->kind, PlanKind::halves);

  testing::ScratchDir dir;
  const auto written = write_study_outputs(analysis, dir.path() / "out", true);
  ASSERT_EQ(written.size(), 2u);
  EXPECT_EQ(written[0].filename(), "low_utils_synthetic.csv");
  EXPECT_EQ(written[1].filename(), "split_gemm_synthetic.csv");
  EXPECT_TRUE(std::filesystem::exists(written[1]));
}

TEST(Recoverable, UniformAndWeightedByAnMHistogram) {
  const Series series = planted_series();
  const AnalysisOptions options = study_rule_with_plans();
  const SeriesAnalysis uniform = analyze_series(series, options, MWeights());
  // M=12: 40 → 4+8 = 22; M=16: 45 → 8+8 = 24 (the fastest of all plans for each).
  EXPECT_DOUBLE_EQ(uniform.recoverable.recoverable_us, (40 - 22) + (45 - 24));
  EXPECT_DOUBLE_EQ(uniform.recoverable.sweep_us, 10 + 12 + 40 + 45 + 30);
  EXPECT_FALSE(uniform.recoverable.weighted);

  testing::ScratchDir dir;
  const MWeights weights = MWeights::read(dir.write("w.csv", "m,weight\n12,3\n4,1\n999,5\n").string());
  const SeriesAnalysis weighted = analyze_series(series, options, weights);
  EXPECT_DOUBLE_EQ(weighted.recoverable.recoverable_us, 3 * (40 - 22));
  EXPECT_DOUBLE_EQ(weighted.recoverable.sweep_us, 3 * 40 + 1 * 10);
  EXPECT_TRUE(weighted.recoverable.weighted);

  EXPECT_THROW(MWeights::read(dir.write("bad.csv", "m,weight\n4,-1\n").string()), UserError);
  EXPECT_THROW(MWeights::read(dir.write("dup.csv", "m,weight\n4,1\n4,2\n").string()), UserError);
  EXPECT_THROW(MWeights::read(dir.write("col.csv", "m,w\n4,1\n").string()), UserError);
}

TEST(JsonReport, CarriesAnomaliesPlansAndSummary) {
  const Series series = planted_series();
  const SeriesAnalysis analysis = analyze_series(series, study_rule_with_plans(), MWeights());
  const nlohmann::json report = series_json(analysis);
  ASSERT_EQ(report["anomalies"].size(), 2u);
  const nlohmann::json& first = report["anomalies"][0];
  EXPECT_EQ(first["m"], 12);
  EXPECT_EQ(first["best_smaller_m"], 8);  // 8 at 12 us has a higher MFU than 4 at 10 us
  EXPECT_EQ(first["plans"]["study_pair"]["parts"], nlohmann::json::array({4, 8}));
  EXPECT_TRUE(first["plans"]["halves"].is_null());  // 6 was not measured
  EXPECT_DOUBLE_EQ(first["best_plan"]["predicted_us"].get<double>(), 22);
  EXPECT_DOUBLE_EQ(first["best_plan"]["gain_pct"].get<double>(), 100 * (40.0 - 22) / 40);
  EXPECT_EQ(report["summary"]["anomalies"], 2);
  EXPECT_EQ(report["summary"]["with_plan"], 2);
  EXPECT_EQ(report["summary"]["best_plan_kinds"]["halves"], 1);
}

}  // namespace
}  // namespace shapescope::analyze
