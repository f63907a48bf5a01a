// Where a kernel's configuration predicts its time to step up with M, for the adaptive search's
// coarse pass: from the tile the kernel picks (KernelEntry::config_for) and the device's SM count,
// the last M of each wave (full waves of tiles, split-K included), and within the first wave the
// last M of each tile row. The heuristic may pick another tile as M grows, so each power-of-two
// range of M asks for its own tile. Each boundary carries its predicted effect, the relative rise of the
// work past it (one more wave over `wave` waves: 1/wave; one more tile row over `rows`: 1/rows), so
// that the search can keep the boundaries that matter where the configuration predicts one at almost
// every M (many tile columns, one row per wave).
#pragma once

#include <cstdint>
#include <vector>

#include "common/model_catalog.hpp"
#include "kernels/kernel.hpp"
#include "profiler/adaptive_search.hpp"

namespace shapescope::profiler {

// Ascending, unique M within [1, max_m] (the largest effect where two ranges of M predict the same M);
// empty when the kernel does not say its tile or the device its SMs.
std::vector<PredictedBoundary> predicted_boundaries(const kernels::KernelEntry& kernel, const GemmProblem& problem,
                                          int multiprocessors, int64_t max_m);

}  // namespace shapescope::profiler
