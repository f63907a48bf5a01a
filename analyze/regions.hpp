// Regions: consecutive anomalies that share a cause, read as one finding
// ("M 260–336: 128x128 tiles spill into a second wave, −25…−42%, remedy: …")
// instead of one row per M. docs/regions.md says how to read one.
//
// How anomalies become regions:
//  1. Runs: anomalies in M order, a run broken where more than kRegionGap
//     measured, unflagged M lie between two anomalies.
//  2. Every member of a run is explained against one reference, the point the
//     rule compared the run's first anomaly with (the level before the run), so
//     the members' causes are comparable; a member that reference leaves without
//     a cause keeps its own, against the reference its rule chose. Each member's
//     leading cause (the first of wave quantization, kernel switch, expert rows, throttling,
//     the counter causes, in that order; noise is no cause) and its key (tiles
//     and waves; the launched kernel without its launch grid; …) are its
//     signature. A member without a
//     cause takes its run's nearest key but is not counted for the cause
//     (Region::supported_findings), so a cause is only claimed where its
//     arithmetic holds.
//  3. A region gathers the anomalies of one key that lie no further apart than
//     kRegionGap unflagged measured M or kRegionSpan of the M (a library that alternates between two kernels
//     over M 24000–32768 is one region per kernel, not a hundred); runs with no
//     cause at all stay apart, one region each. Regions of different causes may
//     thus interleave in M; every anomaly is in exactly one.
// Each region's remedy is the best of: another kernel of the same problem
// measured at every member M (from the other profiles given), a pad-up of the
// whole region to one measured M' past it, or the split search's best plans of
// its members; kept when it beats the region's time × split ratio.
// Impact, by which regions are sorted: time lost to the drops, Σ weight(M) ×
// time(M) × drop(M) over the members (weights from --m-weights, else 1 per M).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/analysis.hpp"
#include "analyze/explain.hpp"
#include "analyze/m_weights.hpp"

namespace shapescope::analyze {

// Unflagged measured M that may lie between two anomalies of one region.
constexpr std::size_t kRegionGap = 2;
// How far apart in M, relative to M, two anomalies of one cause may lie in one region.
constexpr double kRegionSpan = 0.125;

enum class RemedyKind { another_kernel, pad_up, split };
std::string to_string(RemedyKind kind);

struct RegionRemedy {
  RemedyKind kind = RemedyKind::pad_up;
  std::string description;  // what to run, with its predicted time over the region's members
  double predicted_us = 0;  // summed over the members
  double gain = 0;          // 1 − predicted / the members' measured time
};

struct Region {
  int64_t first_m = 0, last_m = 0;
  std::vector<std::size_t> findings;  // into SeriesAnalysis::findings, ascending M
  std::size_t measured = 0;           // measured M from first_m to last_m, flagged or not, in any region
  std::size_t reference_index = 0;    // into Series::points: what every member was explained against
  double worst_drop = 0, median_drop = 0;
  std::optional<Cause> cause;         // the members' shared cause, with its arithmetic at the worst member
  std::string unexplained;            // without a cause: what ruled the causes out (at the worst member)
  std::vector<std::size_t> supported_findings;  // the members whose own arithmetic the cause predicts (into findings)
  std::optional<RegionRemedy> remedy;
  double members_us = 0;              // measured time summed over the members
  double lost_us = 0;                 // the impact, see above
  bool supported() const { return cause.has_value(); }
};

struct RegionInputs {
  const MWeights* weights = nullptr;             // null: 1 per M
  const CountersByM* counters = nullptr;         // counters of this profile (profile --counters), or null
  std::vector<const Series*> other_kernels;      // candidates for the another-kernel remedy (any profiles)
  double split_ratio = 0.9;                      // the bar a remedy must beat
};

// Regions of one analysis, sorted by impact (largest first).
std::vector<Region> find_regions(const SeriesAnalysis& analysis, const RegionInputs& inputs);

// "M 260–336 (18 anomalies among 20 measured M)".
std::string describe_range(const Region& region);
// "−25.1…−41.9% (median −31.0%)".
std::string describe_drop(const Region& region);
// "wave quantization: …", or "no supported cause: …".
std::string describe_cause(const Region& region);
// "pad up: … (−12.0%)", or "none beats the bar".
std::string describe_remedy(const Region& region);

nlohmann::json regions_json(const std::vector<Region>& regions, const SeriesAnalysis& analysis);

}  // namespace shapescope::analyze
