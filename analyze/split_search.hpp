// What to run instead of one GEMM at an anomalous M, predicted from the
// profile itself: a plan is a list of launches whose measured times are summed.
//
//  study_pair  the study's split (FairySpeed gemm/shape_utils_analyze.py,
//              find_matching_rows): over all pairs of two different measured
//              batches m1 < m2 with m1 + m2 = M, the pair with the smallest
//              summed time (ties: the smallest m1, the first pair its
//              itertools.combinations meets), kept when that sum is strictly
//              below time(M) * split_ratio. It never uses m1 == m2.
//  halves      M/2 + M/2, the split the study's pair enumeration cannot see.
//  k_way       the fastest exact decomposition of M into 2..max_parts measured
//              sizes (sizes may repeat), by dynamic programming.
//  pad_up      run a larger measured M' > M (padded rows) when time(M') is smaller.
//
// Predicted time = sum of the parts' measured times + launch_overhead_us for each
// launch after the first. The overhead defaults to 0: every measured time already
// contains its own launch's fixed cost (the smallest-M time is mostly that cost,
// and it is in every part), so adding it again would double count; what remains
// is the host-side gap between back-to-back launches, which depends on how the
// engine launches (CUDA graphs: ~0), so the user states it. Only plans whose
// predicted time is below time(M) * split_ratio are reported (the study's bar);
// the study pair keeps the study's own test on the bare sum, so that its output
// matches the study's whatever the overhead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/series.hpp"

namespace shapescope::analyze {

enum class PlanKind { study_pair, halves, k_way, pad_up };
std::string to_string(PlanKind kind);

struct SplitPlan {
  PlanKind kind = PlanKind::study_pair;
  std::vector<int64_t> parts;  // M of each launch, ascending (pad_up: the padded M')
  double predicted_us = 0;
  double gain = 0;             // (time(M) - predicted) / time(M)
};

struct SplitOptions {
  double split_ratio = 0.9;
  int max_parts = 4;
  double launch_overhead_us = 0;
};

struct PlanSet {
  double time_us = 0;  // the monolithic GEMM's measured time
  std::optional<SplitPlan> study_pair, halves, k_way, pad_up;
  // The fastest plan that beats time * split_ratio; ties prefer fewer launches,
  // then the order study_pair, halves, k_way, pad_up.
  std::optional<SplitPlan> best(double split_ratio) const;
};

class SplitSearch {
 public:
  // Tables cover M up to `largest_target` (the largest M that will be asked about).
  SplitSearch(const Series& series, const SplitOptions& options, int64_t largest_target);

  PlanSet plans_for(std::size_t point_index) const;
  std::optional<SplitPlan> study_pair(std::size_t point_index) const;
  std::optional<SplitPlan> halves(std::size_t point_index) const;
  std::optional<SplitPlan> k_way(std::size_t point_index) const;
  std::optional<SplitPlan> pad_up(std::size_t point_index) const;

 private:
  double time_of(int64_t m) const;  // infinity when m is not measured
  std::vector<int64_t> decomposition(int parts, int64_t m) const;
  SplitPlan make_plan(PlanKind kind, std::vector<int64_t> parts, double predicted_us, double time_us) const;

  const Series& series_;
  SplitOptions options_;
  int64_t limit_ = 0;
  std::vector<int32_t> index_of_m_;                 // point index of each M ≤ limit_, or -1
  int full_levels_ = 0;                             // cost_ holds exact-k tables for k = 1..full_levels_
  std::vector<std::vector<double>> cost_;           // cost_[k][x]: fastest exactly-k-part cover of x
  std::vector<std::vector<int32_t>> first_part_;    // the part chosen first for cost_[k][x]
  std::vector<std::size_t> fastest_from_;           // index of the fastest point at or after i
};

}  // namespace shapescope::analyze
