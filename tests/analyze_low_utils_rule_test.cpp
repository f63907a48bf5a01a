#include "analyze/low_utils_rule.hpp"

#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "analyze_test_support.hpp"
#include "common/csv.hpp"

namespace shapescope::analyze {
namespace {

using testing::fairyspeed;

std::set<int64_t> flagged_batches(const Series& series, double ratio) {
  std::set<int64_t> batches;
  for (const Anomaly& anomaly : find_anomalies(series, AnomalyRule::study, {ratio})) batches.insert(anomaly.m);
  return batches;
}

// The rule restated independently, straight from the CSV text: row k is
// flagged when the largest utils among rows 0..k-1, times the ratio, is
// greater than its utils.
std::set<int64_t> restated_study_rule(const std::filesystem::path& file, double ratio) {
  const csv::Table table = csv::read_file(file);
  const int batch_column = table.column("batch");
  const int utils_column = table.column("utils");
  std::vector<double> utils;
  std::set<int64_t> flagged;
  for (const auto& row : table.rows) {
    const double value = std::stod(row[static_cast<std::size_t>(utils_column)]);
    if (!utils.empty() && *std::max_element(utils.begin(), utils.end()) * ratio > value) {
      flagged.insert(std::stoll(row[static_cast<std::size_t>(batch_column)]));
    }
    utils.push_back(value);
  }
  return flagged;
}

TEST(LowUtilsRule, MatchesAnIndependentRestatementOnEveryStudyProfile) {
  for (const std::string& name : testing::study_profiles()) {
    const std::vector<Series> series = read_series_file(fairyspeed(name).string(), {});
    ASSERT_EQ(series.size(), 1u) << name;
    for (const double ratio : {0.85, 0.95}) {
      const std::set<int64_t> ours = flagged_batches(series[0], ratio);
      EXPECT_EQ(ours, restated_study_rule(fairyspeed(name), ratio)) << name << " ratio " << ratio;
      EXPECT_FALSE(ours.empty()) << name;
    }
  }
}

TEST(LowUtilsRule, ReproducesTheStudysPublishedRtx4090Output) {
  // The study's gemm/analyze_results/low_utils_torchgemm_NVIDIA_GeForce_RTX_4090_torch_2.5.1+cu124_...csv
  // lists 2882 batches, starting 196, 2180, 2184 and ending 32768.
  const std::vector<Series> series = read_series_file(fairyspeed(testing::kRtx4090Torch251).string(), {});
  const std::vector<Anomaly> anomalies = find_anomalies(series[0], AnomalyRule::study, {0.85});
  ASSERT_EQ(anomalies.size(), 2882u);
  EXPECT_EQ(anomalies[0].m, 196);
  EXPECT_EQ(anomalies[1].m, 2180);
  EXPECT_EQ(anomalies[2].m, 2184);
  EXPECT_EQ(anomalies.back().m, 32768);
}

TEST(LowUtilsRule, ComparisonIsStrictAndTheFirstRowIsNeverFlagged) {
  // MFU from time: utils of M=2 at time 2 equals M=1's at time 1; at ratio 0.5
  // a point at exactly half the best MFU is not flagged, just below it is.
  Series series = testing::make_series({{1, 1.0}, {2, 4.0}, {3, 6.0000001}});
  series.points[1].utils = series.points[0].utils * 0.5;
  const std::vector<Anomaly> anomalies = low_utils_anomalies(series, 0.5);
  ASSERT_EQ(anomalies.size(), 1u);
  EXPECT_EQ(anomalies[0].m, 3);
  EXPECT_EQ(anomalies[0].reference_m, 1);
}

TEST(LowUtilsRule, ReferenceIsTheFirstRowHoldingTheMaximum) {
  Series series = testing::make_series({{1, 1.0}, {2, 2.0}, {3, 9.0}});
  series.points[1].utils = series.points[0].utils;  // a tie for the maximum
  const std::vector<Anomaly> anomalies = low_utils_anomalies(series, 0.85);
  ASSERT_EQ(anomalies.size(), 1u);
  EXPECT_EQ(anomalies[0].reference_index, 0u);
  EXPECT_NEAR(anomalies[0].drop(), 1 - series.points[2].utils / series.points[0].utils, 1e-15);
}

}  // namespace
}  // namespace shapescope::analyze
