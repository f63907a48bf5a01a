// `analyze --stability A.csv B.csv …`: do repeated sweeps flag the same batches?
// Each run's flagged set side by side, the pairwise Jaccard index
// |A ∩ B| / |A ∪ B| over the M both runs measured, and per anomaly which runs
// flagged it: reproduced (every run that measured it) — the findings worth acting
// on — or not. Whether a drop holds across passes even where one pass alone is not
// conclusive is pass_agreement.hpp's question.
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

// One M that some run flagged.
struct AnomalyAgreement {
  int64_t m = 0;
  std::vector<std::size_t> flagged_by;  // run indices, ascending
  std::size_t measured_by = 0;          // runs that measured this M
  // Flagged by every run that measured it, and more than one did.
  bool reproduced() const { return measured_by >= 2 && flagged_by.size() == measured_by; }
};

struct StabilityReport {
  std::string rule;
  std::vector<FlaggedRun> runs;
  std::vector<std::vector<double>> jaccard;  // [i][j] over the M both runs measured
  std::vector<int64_t> in_every_run;         // flagged in all runs (M measured by all)
  std::vector<int64_t> measured_by_all;
  std::vector<AnomalyAgreement> anomalies;   // every M any run flagged, ascending
};

using AnomalyFinder = std::function<std::vector<Anomaly>(const Series&)>;

FlaggedRun flag_run(const Series& series, const AnomalyFinder& find);
// Needs at least two runs; throws UserError otherwise.
StabilityReport stability_report(std::vector<FlaggedRun> runs, const std::string& rule);

// |a ∩ b| / |a ∪ b| of two ascending sets; 1 when both are empty (they agree).
double jaccard(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Keeps the members of `values` (ascending) that also occur in `within` (ascending).
std::vector<int64_t> restrict_to(const std::vector<int64_t>& values, const std::vector<int64_t>& within);

// The anomalies some run flagged and another run that measured them did not: "508 (run 1 of 2)".
std::string list_not_reproduced(const StabilityReport& report, std::size_t limit);

// The terminal table: runs with their counts, the Jaccard matrix, the common and the
// not reproduced anomalies.
std::string format_stability(const StabilityReport& report, std::size_t list_limit);

}  // namespace shapescope::analyze
