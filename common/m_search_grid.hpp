// The candidate grid of an adaptive M search as its sidecar records it (the `m_search` group's `grid`):
// ascending runs [first, last, step] of equal steps. The profiler writes it; the analyzer and the replay
// tests read it back to know which M were candidates and were not measured.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace shapescope {

// The runs of a sorted, duplicate-free grid.
nlohmann::json grid_runs_json(const std::vector<int64_t>& grid);

// The grid's M values back from its runs, sorted and duplicate-free; throws UserError naming the run when a
// run is no [first, last, step] of positive M or would expand past any planned sweep.
std::vector<int64_t> grid_from_runs(const nlohmann::json& runs);

// The grid an adaptive sidecar's `m_search` group refined; empty for a grid sweep or no group.
std::vector<int64_t> adaptive_grid(const std::optional<nlohmann::json>& m_search);

}  // namespace shapescope
