// How much of an exhaustive profile's analysis the analysis of a partial profile (an adaptive M search's, of
// the same grid) finds: its anomalous M, their split plans, and its regions (docs/adaptive_search.md; the
// targets bench/adaptive_replay checks).
//  - an anomalous M is found when the partial analysis flags an anomaly within one grid step of it;
//  - its plan (the split search's best, a predicted gain of split_ratio or more) when such an anomaly has one;
//  - a region (analyze/regions.hpp) when a region of the partial analysis overlaps it, either widened by one
//    grid step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyze/analysis.hpp"

namespace shapescope::analyze {

struct SearchRecall {
  std::size_t anomalies = 0, anomalies_found = 0;
  std::size_t anomalies_near_measured = 0;  // within one grid step of a measured M, flagged or not
  std::size_t plans = 0, plans_found = 0;
  std::size_t regions = 0, regions_found = 0;
  std::vector<int64_t> missed;        // anomalous M not found
  std::vector<int64_t> missed_plans;  // anomalous M whose plan was not found

  SearchRecall& operator+=(const SearchRecall& other);
};

// `grid`: the candidates, ascending (the grid steps are counted over it).
SearchRecall search_recall(const SeriesAnalysis& exhaustive, const SeriesAnalysis& partial,
                           const std::vector<int64_t>& grid);

}  // namespace shapescope::analyze
