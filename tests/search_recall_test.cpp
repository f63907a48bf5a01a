#include "analyze/search_recall.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "analyze/regions.hpp"
#include "analyze/synthetic_sweep.hpp"

namespace shapescope::analyze {
namespace {

SyntheticSweep quiet_sweep() {
  SweepSpec spec;
  spec.batches = 1200;
  spec.scatter = 0.01;
  spec.outlier_rate = 0;
  spec.drift = 0;
  spec.cliffs = {{CliffKind::multi_batch, 0.4}, {CliffKind::kernel_switch, 0.3}};
  spec.seed = 7;
  return synthetic_sweep(spec);
}

std::vector<int64_t> grid_of(const Series& series) {
  std::vector<int64_t> grid;
  for (const SeriesPoint& point : series.points) grid.push_back(point.m);
  return grid;
}

AnalysisOptions with_plans() {
  AnalysisOptions options;
  options.check_split = true;
  return options;
}

TEST(SearchRecall, AProfileFindsEverythingOfItself) {
  const SyntheticSweep sweep = quiet_sweep();
  const SeriesAnalysis analysis = analyze_series(sweep.series, with_plans(), MWeights());
  ASSERT_FALSE(analysis.findings.empty());
  const SearchRecall recall = search_recall(analysis, analysis, grid_of(sweep.series));
  EXPECT_EQ(recall.anomalies, analysis.findings.size());
  EXPECT_EQ(recall.anomalies_found, recall.anomalies);
  EXPECT_EQ(recall.anomalies_near_measured, recall.anomalies);
  EXPECT_EQ(recall.plans_found, recall.plans);
  EXPECT_EQ(recall.regions, find_regions(analysis, {}).size());
  EXPECT_EQ(recall.regions_found, recall.regions);
  EXPECT_TRUE(recall.missed.empty());
}

TEST(SearchRecall, ACliffThePartialProfileNeverMeasuredIsMissedWithItsRegion) {
  const SyntheticSweep sweep = quiet_sweep();
  const SeriesAnalysis exhaustive = analyze_series(sweep.series, with_plans(), MWeights());
  // The partial profile: every M of the grid but those the second cliff touched, and a few steps around them.
  const InjectedCliff& unseen = sweep.cliffs.at(1);
  const int64_t first = sweep.series.points.at(unseen.first_touched - 2).m;
  const int64_t last = sweep.series.points.at(unseen.last_touched + 2).m;
  Series partial = sweep.series;
  partial.m_grid = grid_of(sweep.series);
  partial.points.erase(std::remove_if(partial.points.begin(), partial.points.end(),
                                      [&](const SeriesPoint& p) { return p.m >= first && p.m <= last; }),
                       partial.points.end());
  const SeriesAnalysis analysis = analyze_series(partial, with_plans(), MWeights());
  const SearchRecall recall = search_recall(exhaustive, analysis, partial.m_grid);

  std::size_t in_unseen = 0;
  for (const Finding& finding : exhaustive.findings) in_unseen += finding.anomaly.m >= first && finding.anomaly.m <= last;
  ASSERT_GT(in_unseen, 0u);
  EXPECT_EQ(recall.anomalies, exhaustive.findings.size());
  EXPECT_EQ(recall.anomalies_found, recall.anomalies - in_unseen);
  EXPECT_EQ(recall.missed.size(), in_unseen);
  for (const int64_t m : recall.missed) EXPECT_TRUE(m >= first && m <= last) << m;
  EXPECT_EQ(recall.regions_found + 1, recall.regions);
}

}  // namespace
}  // namespace shapescope::analyze
