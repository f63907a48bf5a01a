// `analyze --stability A.csv B.csv …`: do repeated sweeps flag the same batches?
// Each run's flagged set side by side, the pairwise Jaccard index
// |A ∩ B| / |A ∪ B| over the M both runs measured, and the batches flagged in
// every run — the findings worth acting on.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analyze/anomaly.hpp"
#include "analyze/series.hpp"

namespace shapescope::analyze {

struct FlaggedRun {
  std::string label;
  std::vector<int64_t> measured;  // every M of the run, ascending
  std::vector<int64_t> flagged;   // the anomalous M, ascending
};

struct StabilityReport {
  std::string rule;
  std::vector<FlaggedRun> runs;
  std::vector<std::vector<double>> jaccard;  // [i][j] over the M both runs measured
  std::vector<int64_t> in_every_run;         // flagged in all runs (M measured by all)
  std::vector<int64_t> measured_by_all;
};

using AnomalyFinder = std::function<std::vector<Anomaly>(const Series&)>;

FlaggedRun flag_run(const Series& series, const AnomalyFinder& find);
// Needs at least two runs; throws UserError otherwise.
StabilityReport stability_report(std::vector<FlaggedRun> runs, const std::string& rule);

// |a ∩ b| / |a ∪ b| of two ascending sets; 1 when both are empty (they agree).
double jaccard(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Keeps the members of `values` (ascending) that also occur in `within` (ascending).
std::vector<int64_t> restrict_to(const std::vector<int64_t>& values, const std::vector<int64_t>& within);

// The terminal table: runs with their counts, the Jaccard matrix, the common anomalies.
std::string format_stability(const StabilityReport& report, std::size_t list_limit);

}  // namespace shapescope::analyze
