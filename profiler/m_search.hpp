// `profile --m-search grid|adaptive`: measure every M of the grid, or search it
// (profiler/adaptive_search.hpp) within a budget. The default lives here, in one place.
// An adaptive profile's sidecar says so in its `m_search` group, with the grid it refined,
// so that the analysis knows which M were candidates and were not measured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/adaptive_search.hpp"

namespace shapescope::profiler {

enum class MSearch { grid, adaptive };

// What `profile` does without --m-search.
inline constexpr MSearch kDefaultMSearch = MSearch::grid;

std::string to_string(MSearch search);
// Throws UserError naming the valid values.
MSearch parse_m_search(const std::string& text);

struct MSearchOptions {
  MSearch mode = kDefaultMSearch;
  int64_t max_points = 0;    // --max-points per file, 0: no cap
  double time_budget_s = 0;  // --time-budget per file in seconds, 0: none
};

// Throws UserError when a budget is negative, or given to a grid sweep.
void check_m_search_options(const MSearchOptions& options);

// What an adaptive file's sidecar records.
struct MSearchRecord {
  std::vector<int64_t> grid;  // the candidates
  AdaptiveResult result;
};

// The sidecar's `m_search` group: {"mode": "adaptive", "grid": (common/m_search_grid.hpp), "grid_points",
// "measured_points", "coarse_points", "budget_spent"}.
nlohmann::json m_search_json(const MSearchRecord& record);

}  // namespace shapescope::profiler
