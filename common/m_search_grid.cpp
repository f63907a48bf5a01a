#include "common/m_search_grid.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

// More M than any sweep plans: a grid beyond this is a damaged sidecar.
constexpr int64_t kMaxGridPoints = 10'000'000;

}  // namespace

nlohmann::json grid_runs_json(const std::vector<int64_t>& grid) {
  nlohmann::json runs = nlohmann::json::array();
  for (std::size_t i = 0; i < grid.size();) {
    std::size_t j = i + 1;
    const int64_t step = j < grid.size() ? grid[j] - grid[i] : 1;
    while (j < grid.size() && grid[j] - grid[j - 1] == step) ++j;
    if (j - i == 2) j = i + 1;  // two values are no run: the second may start the next one
    runs.push_back({grid[i], grid[j - 1], j - i > 1 ? step : 1});
    i = j;
  }
  return runs;
}

std::vector<int64_t> grid_from_runs(const nlohmann::json& runs) {
  if (!runs.is_array()) {
    throw UserError(fmt::format("sidecar m_search.grid: {} is no list of [first, last, step]; fix or delete the sidecar",
                                runs.dump()));
  }
  std::vector<int64_t> grid;
  for (const nlohmann::json& run : runs) {
    if (!run.is_array() || run.size() != 3 || !run[0].is_number_integer() || !run[1].is_number_integer() ||
        !run[2].is_number_integer() || run[2].get<int64_t>() < 1) {
      throw UserError(fmt::format("sidecar m_search.grid: {} is not [first, last, step]; fix or delete the sidecar",
                                  run.dump()));
    }
    const int64_t first = run[0].get<int64_t>(), last = run[1].get<int64_t>(), step = run[2].get<int64_t>();
    if (first < 1 || last < first || (last - first) / step >= kMaxGridPoints ||
        int64_t(grid.size()) + (last - first) / step >= kMaxGridPoints) {
      throw UserError(fmt::format("sidecar m_search.grid: {} is no grid of 1 to {} positive M; fix or delete the sidecar",
                                  run.dump(), kMaxGridPoints));
    }
    for (int64_t m = first; m <= last; m += step) grid.push_back(m);
  }
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  return grid;
}

std::vector<int64_t> adaptive_grid(const std::optional<nlohmann::json>& m_search) {
  if (!m_search || !m_search->is_object() || m_search->value("mode", "") != "adaptive" || !m_search->contains("grid"))
    return {};
  return grid_from_runs((*m_search)["grid"]);
}

}  // namespace shapescope
