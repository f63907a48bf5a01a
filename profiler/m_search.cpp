#include "profiler/m_search.hpp"

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope::profiler {

std::string to_string(MSearch search) { return search == MSearch::adaptive ? "adaptive" : "grid"; }

MSearch parse_m_search(const std::string& text) {
  if (text == "grid") return MSearch::grid;
  if (text == "adaptive") return MSearch::adaptive;
  throw UserError(fmt::format("--m-search '{}': give grid (every M) or adaptive (a search of the grid)", text));
}

void check_m_search_options(const MSearchOptions& options) {
  if (options.max_points < 0) throw UserError(fmt::format("--max-points {}: give 0 (no cap) or more", options.max_points));
  if (options.time_budget_s < 0)
    throw UserError(fmt::format("--time-budget {}: give 0 (none) or more seconds", options.time_budget_s));
  if (options.mode == MSearch::grid && (options.max_points > 0 || options.time_budget_s > 0))
    throw UserError("--max-points and --time-budget bound an adaptive search: add --m-search adaptive");
}

nlohmann::json m_search_json(const MSearchRecord& record) {
  nlohmann::json runs = nlohmann::json::array();
  const std::vector<int64_t>& grid = record.grid;
  for (std::size_t i = 0; i < grid.size();) {
    std::size_t j = i + 1;
    const int64_t step = j < grid.size() ? grid[j] - grid[i] : 1;
    while (j < grid.size() && grid[j] - grid[j - 1] == step) ++j;
    if (j - i == 2) j = i + 1;  // two values are no run: the second may start the next one
    runs.push_back({grid[i], grid[j - 1], j - i > 1 ? step : 1});
    i = j;
  }
  return {{"mode", to_string(MSearch::adaptive)},
          {"grid", std::move(runs)},
          {"grid_points", grid.size()},
          {"measured_points", record.result.measured.size()},
          {"coarse_points", record.result.coarse_points},
          {"budget_spent", record.result.budget_spent}};
}

std::vector<int64_t> grid_from_runs(const nlohmann::json& runs) {
  std::vector<int64_t> grid;
  for (const nlohmann::json& run : runs) {
    const int64_t first = run.at(0).get<int64_t>(), last = run.at(1).get<int64_t>(), step = run.at(2).get<int64_t>();
    for (int64_t m = first; m <= last; m += step) grid.push_back(m);
  }
  return grid;
}

}  // namespace shapescope::profiler
