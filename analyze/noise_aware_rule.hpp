// The noise-aware anomaly rule, the default of `analyze` (`--rule study` keeps
// the published one). Why another rule: the study compares each batch with the
// single best MFU of ALL smaller batches, so one lucky point, or a stretch of the
// sweep that ran on a cooler, faster-clocked GPU, makes thousands of ordinary
// points "regressions" (two back-to-back passes on an H200 flag 1667 and 50
// batches, Jaccard 0.016). This rule asks two questions instead of one.
//
// 1. Is the batch materially slow? Its MFU is below ratio × the local level. The
//    level is what the `window` (16) preceding batches that were not themselves
//    flagged reach: their 90th percentile (the envelope), net of what noise adds
//    to a 90th percentile (Φ⁻¹(0.9) = 1.28 σ of one batch; nothing when the
//    batches are quiet). A percentile needs several points at that level, so one
//    lucky point cannot set it, yet in the rising part of a sweep it follows the
//    latest batches; nearby batches were measured seconds before this one, so
//    slow clock or thermal drift of an M-ordered sweep cancels instead of posing
//    as shape; and skipping flagged batches keeps a long cliff from lowering the
//    bar for the rest of itself.
// 2. Is the drop more than noise? The run of consecutive batches below the bar
//    that starts here must lie below the level, on average, by more than z times
//    the combined uncertainty of the level (the percentile's standard error) and
//    of the run's mean, each batch's noise taken at the level (what it would
//    scatter by had it not dropped). Uncertainty comes from the profile's ci95_us
//    (or stddev_us) where present; otherwise from the data: the local noise
//    (local_noise.hpp: per kernel, around a Theil-Sen trend, robust) of the
//    `kNoiseBatches` (48) preceding unflagged batches, leaving out the candidate's
//    `kNeighbourhood` (4) predecessors, whose dips may belong to the same cliff:
//    enough residuals for a precise spread, few enough for a line to follow the sweep.
//    On a partial profile (an adaptive search measured some M of a grid) those
//    counts are grid steps, not batches: the noise comes from the unflagged batches
//    between 4 and 52 steps below the candidate's M, as the grid sweep's would,
//    widened to the nearest `kMinimumNoiseBatches` (12) where fewer were measured
//    there, and the trend is fitted over M. 48 batches of a sparse profile would
//    span a wide, curved stretch of M whose curvature would pass for noise. The
//    level's window likewise spans `window` steps (at least `kMinimumLevelBatches`,
//    6, batches). Steps are counted over unflagged batches only: a grid sweep's
//    windows skip the flagged ones.
//    z is set so that a profile of n points gets a false alarm from noise alone
//    with probability `false_alarm_rate` (Bonferroni over the n tests): the
//    normal quantile Φ⁻¹(1 − rate / n) for stated uncertainties, Student's t with
//    the noise estimate's degrees of freedom otherwise (a spread measured on few
//    points is itself uncertain). Long sweeps thus flag no more noise than short
//    ones. A lone point needs the whole drop by itself; a level shift gathers
//    evidence from every batch it covers.
// The reference reported with an anomaly is the envelope and the window batch at
// it (the best nearby batch), so a reported drop is at least the bar's.
// Batches after a flagged one stay flagged while they remain below the same bar
// (one run, one decision). The first batches, with fewer than 4 predecessors,
// have no reference and are never flagged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyze/anomaly.hpp"
#include "analyze/series.hpp"

namespace shapescope::analyze {

struct NoiseAwareOptions {
  double utils_ratio = kStudyUtilsRatio;  // the bar, as in the study's rule
  int window = 16;                // preceding unflagged batches the level is taken from
  double envelope_quantile = 0.9; // the envelope: this quantile of the window
  double false_alarm_rate = 0.05; // per profile, from noise alone
};

// Why the drop was judged more than noise.
enum class NoiseEvidence {
  drop,           // the run below the bar is below the level by more than the uncertainty
  continues_run,  // the previous batch was flagged and this one is still below the same bar
};

struct NoiseAwareAnomaly {
  Anomaly anomaly;  // reference_utils is the envelope; reference_m the window batch at or just above it
  double level_utils = 0;           // the envelope net of noise
  double bar_utils = 0;             // ratio × level
  double relative_uncertainty = 0;  // of the run's drop below the level, relative to the level
  double z = 0;                     // the threshold it was compared with, in units of that uncertainty
  std::size_t run_length = 1;       // batches below the bar from this one on (at most the window)
  NoiseEvidence evidence = NoiseEvidence::drop;
  bool uncertainty_from_data = true;  // false when the profile's ci95/stddev columns were used
};

// Batches before this many predecessors have no reference.
constexpr std::size_t kMinimumWindow = 4;
// The noise estimate's batches, and the candidate's predecessors left out of it.
constexpr std::size_t kNoiseBatches = 48;
constexpr std::size_t kNeighbourhood = 4;
// On a partial profile, at least this many batches make the level (a 90th percentile of fewer
// sits low) and the noise estimate.
constexpr std::size_t kMinimumLevelBatches = 6;
constexpr std::size_t kMinimumNoiseBatches = 12;

// The rule's state while it walks a series in M order; also drives rules that
// judge several aligned series at once (pass_agreement.hpp). Per batch i:
// reference(i) from the batches accepted so far, drop_test() when batch i is
// below the bar, then accept(i, flagged).
class NoiseAwareScan {
 public:
  struct Reference {
    double envelope = 0;
    std::size_t envelope_index = 0;  // the window batch at or just above the envelope
    // Known when `judged`: batch i lies below ratio × envelope (no other batch can be
    // below the bar), or when asked for.
    bool judged = false;
    double level = 0, bar = 0;
    double noise = 0;         // relative σ of one batch of the window
    double level_sigma = 0;   // relative standard error of the level
    std::size_t dof = 0;      // of the noise estimate; 0 when the profile stated its uncertainty
  };
  struct DropTest {
    double level = 0;
    double run_mean = 0;  // MFU over the run
    double sigma = 0;     // uncertainty of level − run_mean (absolute)
    double z = 0;         // the threshold, in units of sigma
    bool beyond_noise() const { return level - run_mean > z * sigma; }
  };

  // Throws UserError on unusable options.
  NoiseAwareScan(const Series& series, const NoiseAwareOptions& options);
  // The reference for batch i; nothing before kMinimumWindow batches have been accepted.
  std::optional<Reference> reference(std::size_t i, bool always_judge = false) const;
  // The batches [i, i + run) against a judged `reference`; run >= 1.
  DropTest drop_test(std::size_t i, std::size_t run, const Reference& reference) const;
  // Batch i is decided; unflagged batches join the window.
  void accept(std::size_t i, bool flagged);

 private:
  double student_z(std::size_t dof) const;
  // Partial profiles: the accepted unflagged batches below i, latest first, each with its distance
  // in grid steps (the gaps after flagged batches not counted: a grid sweep's window skips them);
  // as far back as the window and the noise estimate reach. Empty on a grid sweep.
  std::vector<std::pair<std::size_t, int64_t>> unflagged_steps_below(std::size_t i) const;

  const Series& series_;
  NoiseAwareOptions options_;
  double tail_ = 0;                        // per-test false-alarm probability
  double normal_z_ = 0;                    // Φ⁻¹(1 − tail_)
  double envelope_z_ = 0;                  // Φ⁻¹(envelope_quantile): what noise adds to the envelope, in σ
  int64_t partial_step_ = 0;               // the grid step of a partial profile; 0 on a grid sweep
  std::vector<std::size_t> unflagged_;     // every accepted unflagged batch, in order
  std::vector<bool> flagged_;              // by batch, as accepted
  mutable std::vector<double> student_z_;  // by degrees of freedom, computed when first needed
};

std::vector<NoiseAwareAnomaly> noise_aware_findings(const Series& series, const NoiseAwareOptions& options);
std::vector<Anomaly> noise_aware_anomalies(const Series& series, const NoiseAwareOptions& options);

std::string to_string(NoiseEvidence evidence);

}  // namespace shapescope::analyze
