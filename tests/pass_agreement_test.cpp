#include "analyze/pass_agreement.hpp"

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "analyze/read_multipass_csv.hpp"
#include "common/user_error.hpp"
#include "triage_test_support.hpp"

namespace shapescope::analyze {
namespace {

using triage_testing::flagged_ms;
using triage_testing::inject_step;
using triage_testing::noisy_series;
using triage_testing::data_file;

const PassAnomaly* find_anomaly(const PassAgreement& agreement, int64_t m) {
  for (const PassAnomaly& anomaly : agreement.anomalies) {
    if (anomaly.m == m) return &anomaly;
  }
  return nullptr;
}

TEST(PassAgreement, DropBothPassesShowHoldsWhereNeitherPassAloneIsConclusive) {
  // Two passes in 5% noise with the same -18% batch: within what one pass's noise can
  // produce, beyond what two independent passes can.
  std::vector<Series> passes = {noisy_series(600, 0.05, [](std::size_t) { return 0.7; }, 7),
                                noisy_series(600, 0.05, [](std::size_t) { return 0.7; }, 8)};
  for (Series& pass : passes) inject_step(pass, 300, 1, 0.82);
  const int64_t m = passes[0].points[300].m;
  for (const Series& pass : passes) ASSERT_FALSE(flagged_ms(noise_aware_anomalies(pass, {})).count(m));
  const PassAgreement agreement = pass_agreement(passes, {});
  EXPECT_EQ(agreement.holding(), std::vector<int64_t>{m});
  const PassAnomaly* anomaly = find_anomaly(agreement, m);
  ASSERT_NE(anomaly, nullptr);
  for (const PassReading& pass : anomaly->passes) {
    EXPECT_TRUE(pass.below_bar);
    EXPECT_FALSE(pass.flagged_alone);
    EXPECT_GT(pass.drop(), 0.15);
  }
}

TEST(PassAgreement, DipOfOnePassDoesNotHold) {
  std::vector<Series> passes = {noisy_series(600, 0.01, [](std::size_t) { return 0.7; }, 7),
                                noisy_series(600, 0.01, [](std::size_t) { return 0.7; }, 8)};
  inject_step(passes[0], 200, 1, 0.6);  // a disturbed measurement in pass 1
  inject_step(passes[0], 400, 3, 0.7);  // a cliff in both
  inject_step(passes[1], 400, 3, 0.7);
  const PassAgreement agreement = pass_agreement(passes, {});
  const int64_t dip = passes[0].points[200].m;
  EXPECT_EQ(agreement.holding(), (std::vector<int64_t>{passes[0].points[400].m, passes[0].points[401].m,
                                                       passes[0].points[402].m}));
  const PassAnomaly* anomaly = find_anomaly(agreement, dip);
  ASSERT_NE(anomaly, nullptr) << "pass 1 alone flags it, so it is listed";
  EXPECT_FALSE(anomaly->holds);
  EXPECT_TRUE(anomaly->passes[0].flagged_alone);
  EXPECT_NEAR(anomaly->passes[0].drop(), 0.4, 0.03);
  EXPECT_FALSE(anomaly->passes[1].below_bar);
  EXPECT_NEAR(anomaly->passes[1].drop(), 0, 0.03);
}

TEST(PassAgreement, ComparesTheMEveryPassMeasured) {
  std::vector<Series> passes = {noisy_series(600, 0.01, [](std::size_t) { return 0.7; }, 7),
                                noisy_series(600, 0.01, [](std::size_t) { return 0.7; }, 8)};
  inject_step(passes[0], 300, 1, 0.5);
  inject_step(passes[1], 300, 1, 0.5);
  passes[1].points.erase(passes[1].points.begin() + 100, passes[1].points.begin() + 110);
  const PassAgreement agreement = pass_agreement(passes, {});
  EXPECT_EQ(agreement.batches, 590u);
  EXPECT_EQ(agreement.holding(), std::vector<int64_t>{passes[0].points[300].m});
}

TEST(PassAgreement, RepeatProfileHoldsWhereEvenTheFastestPassDropped) {
  // Median of 3 passes per M, with a tight ci95. At i = 200 all three passes ran 30% slow;
  // at i = 400 two did (the median) while the fastest ran at the level.
  Series repeat = noisy_series(600, 0.005, [](std::size_t) { return 0.7; });
  for (SeriesPoint& point : repeat.points) {
    point.passes = 3;
    point.ci95_us = 0.01 * point.time_us;
    point.fastest_pass_us = point.time_us / 1.004;
  }
  inject_step(repeat, 200, 1, 0.7);
  repeat.points[200].fastest_pass_us = repeat.points[200].time_us / 1.004;
  inject_step(repeat, 400, 1, 0.7);
  const PassAgreement agreement = repeat_agreement(repeat, {});
  EXPECT_EQ(agreement.holding(), std::vector<int64_t>{repeat.points[200].m});
  const PassAnomaly* slow_median = find_anomaly(agreement, repeat.points[400].m);
  ASSERT_NE(slow_median, nullptr);
  EXPECT_TRUE(slow_median->passes[0].flagged_alone);
  EXPECT_FALSE(slow_median->passes[1].below_bar);
  EXPECT_NE(agreement.labels[1].find("fastest of 3 passes"), std::string::npos);
}

TEST(PassAgreement, RefusesWhatIsNotPassesOfOneSweep) {
  const Series one = noisy_series(100, 0.01, [](std::size_t) { return 0.7; });
  EXPECT_THROW(pass_agreement({one}, {}), UserError);
  Series other_shape = one;
  other_shape.n = 8192;
  EXPECT_THROW(pass_agreement({one, other_shape}, {}), UserError);
  EXPECT_THROW(repeat_agreement(one, {}), UserError) << "no row aggregates passes";
}

TEST(PassAgreement, RepeatProfileOfTheH100) {
  // llama3_8b gate_up TP2, M = 64..8192 step 64, --repeat 3 (docs/results/2026-11-22-h100.md, "Stability").
  const std::string path = SHAPESCOPE_SOURCE_DIR
      "/profiles/nvidia_h100_80gb_hbm3/repeat_run1/llama3_8b_gate_up_proj_tp2_N14336_K4096_cublaslt_bf16.csv";
  const std::vector<Series> read = read_series_or_passes(path, {});
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].points[0].passes, 3);
  EXPECT_NEAR(read[0].points[0].fastest_pass_us, 44.0320, 1e-3);  // M=64's time_us_min
  const PassAgreement agreement = pass_agreement_of_files({path}, {}, {});
  EXPECT_EQ(agreement.holding(), (std::vector<int64_t>{448, 1216}));
}

TEST(PassAgreement, TwoPassH200HoldsOnlyAtTheCliffBothPassesShow) {
  const auto path = data_file(triage_testing::kTwoPassH200);
  const PassAgreement agreement = pass_agreement_of_files({path.string()}, {}, {});
  EXPECT_EQ(agreement.batches, 8197u);
  EXPECT_EQ(agreement.holding(), std::vector<int64_t>{704});
  ASSERT_EQ(agreement.anomalies.size(), 2u);
  EXPECT_EQ(agreement.anomalies[0].m, 508);  // pass 1 alone: 18% below its level; pass 2 above it
  EXPECT_FALSE(agreement.anomalies[0].holds);
  EXPECT_TRUE(agreement.anomalies[0].passes[0].flagged_alone);
  EXPECT_LT(agreement.anomalies[0].passes[1].drop(), 0);
  const std::string text = format_pass_agreement(agreement, 10);
  EXPECT_NE(text.find("the drop holds across passes at 1 M: 704"), std::string::npos) << text;
}

}  // namespace
}  // namespace shapescope::analyze
