// A partially measured profile: an adaptive M search (profile --m-search adaptive) measures
// some M of a grid and records the grid in its sidecar (m_search.grid). The analysis says which
// grid M were not measured; the rules and the split search only ever use measured M (never an
// interpolation), so an anomaly is judged against measured M alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/series.hpp"

namespace shapescope::analyze {

struct UnmeasuredM {
  std::size_t grid_points = 0;                        // 0: the profile names no grid (nothing to miss)
  std::size_t count = 0;                              // grid M with no row, measured or excluded
  std::vector<std::pair<int64_t, int64_t>> ranges;    // consecutive grid M with no row: first, last
};

UnmeasuredM unmeasured_m(const Series& series);

// "7 of 40 grid M not measured: 20–28, 36" (at most `max_ranges` ranges, then "…").
std::string describe_unmeasured(const UnmeasuredM& unmeasured, std::size_t max_ranges);

nlohmann::json unmeasured_json(const UnmeasuredM& unmeasured);

}  // namespace shapescope::analyze
