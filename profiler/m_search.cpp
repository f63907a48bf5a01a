#include "profiler/m_search.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/m_search_grid.hpp"
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
  if (!(options.time_budget_s >= 0) || !std::isfinite(options.time_budget_s))
    throw UserError(fmt::format("--time-budget {}: give 0 (none) or a finite number of seconds", options.time_budget_s));
  if (options.mode == MSearch::grid && (options.max_points > 0 || options.time_budget_s > 0))
    throw UserError("--max-points and --time-budget bound an adaptive search: add --m-search adaptive");
}

nlohmann::json m_search_json(const MSearchRecord& record) {
  return {{"mode", to_string(MSearch::adaptive)},
          {"grid", grid_runs_json(record.grid)},
          {"grid_points", record.grid.size()},
          {"measured_points", record.result.measured.size()},
          {"coarse_points", record.result.coarse_points},
          {"budget_spent", record.result.budget_spent}};
}

}  // namespace shapescope::profiler
