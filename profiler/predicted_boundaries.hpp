// Where a kernel's configuration predicts its time to step up with M, for the adaptive search's
// coarse pass: from the tile the kernel picks (KernelEntry::config_for) and the device's SM count,
// the last M of each wave (full waves of tiles, split-K included), and within the first wave the
// last M of each tile row. The heuristic may pick another tile as M grows, so each power-of-two
// range of M asks for its own tile.
#pragma once

#include <cstdint>
#include <vector>

#include "common/model_catalog.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::profiler {

// Ascending, unique, within [1, max_m]; empty when the kernel does not say its tile or the device its SMs.
std::vector<int64_t> predicted_boundaries(const kernels::KernelEntry& kernel, const GemmProblem& problem,
                                          int multiprocessors, int64_t max_m);

}  // namespace shapescope::profiler
