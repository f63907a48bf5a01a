// Turns `profile --module experts` (or `--grouped-preset`) and its routing and layout
// options into a GroupedSweepPlan: expert layers at the requested parallelism, each M
// routed to rows per local expert, laid out contiguous or masked. Every check that can
// fail on user input happens here, before any work.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/model_catalog.hpp"
#include "profiler/grouped_sweep.hpp"

namespace shapescope::profiler {

struct GroupedRequest {
  int ep = 1;                 // --ep
  std::string routing;        // --routing ("" = uniform)
  std::string layout;         // --layout contiguous | masked ("" = contiguous)
  int64_t align = 0;          // --align (0 = 128, DeepGEMM's Hopper padding)
  int64_t max_m = 0;          // --max-m, masked slot rows (0 = the largest group of each M, rounded up to --align)
  std::string preset;         // --grouped-preset
};

constexpr int64_t kDefaultGroupAlign = 128;

// Whether this request profiles grouped GEMMs rather than dense ones.
bool wants_grouped(const std::string& module, const GroupedRequest& request);

// Routed expert layers of `model` (the catalog's problems for --module experts) over `m_values`.
// The routing popularity comes from `seed`, each M's tokens from a seed derived from it and M.
GroupedSweepPlan plan_grouped_experts(const std::vector<GemmProblem>& expert_problems, const GroupedRequest& request,
                                      const std::vector<int64_t>& m_values, uint64_t seed);

// The fixed problems of a --grouped-preset, one point each (M = the rows of all groups).
GroupedSweepPlan plan_grouped_preset(const GroupedRequest& request);

// The seed of M's routing draw.
uint64_t token_seed_for(uint64_t seed, int64_t m);

}  // namespace shapescope::profiler
