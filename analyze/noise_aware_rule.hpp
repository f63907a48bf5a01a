// The noise-aware anomaly rule, the default of `analyze` (`--rule study` keeps
// the published one). Why another rule: the study compares each batch with the
// single best MFU of ALL smaller batches, so one lucky point, or a stretch of the
// sweep that ran on a cooler, faster-clocked GPU, makes thousands of ordinary
// points "regressions" (two back-to-back passes on an H200 flag 1667 and 50
// batches, Jaccard 0.016). This rule asks two questions instead of one.
//
// 1. Is the batch materially slow? Its MFU is below ratio × reference, where the
//    reference is an upper envelope of nearby smaller batches: the 90th
//    percentile of the `window` (16) preceding batches that were not themselves
//    flagged. A percentile needs several points at that level, so one lucky
//    point cannot set it; nearby batches were measured seconds before this one,
//    so slow clock or thermal drift of an M-ordered sweep cancels instead of
//    posing as shape; and skipping flagged batches keeps a long cliff from
//    lowering the bar for the rest of itself.
// 2. Is the shortfall more than noise? The run of consecutive batches below the
//    bar that starts here must lie below it, on average, by more than z times
//    the combined uncertainty of the bar (the envelope's standard error) and of
//    the run's mean. Uncertainty comes from the profile's ci95_us (or stddev_us)
//    where present; otherwise it is estimated from the data, as the robust
//    spread (1.4826 × MAD, relative) of the window around the median of the
//    batches that ran the same kernel (a library alternating between a fast and
//    a slow kernel is structure, not noise). z is set so that a profile
//    of n points gets a false alarm from noise alone with probability
//    `false_alarm_rate` (Bonferroni over the n tests): the normal quantile
//    Φ⁻¹(1 − rate / n) for stated uncertainties, Student's t with w − 1 degrees
//    of freedom when the noise was estimated from w window batches (a spread
//    measured on few points is itself uncertain). Long sweeps thus flag no more
//    noise than short ones. A lone point needs the whole shortfall by itself; a
//    level shift gathers evidence from every batch it covers.
//    One exception: when the library ran a different kernel here than at the
//    batches that set the reference, the cause is deterministic (noise cannot
//    change the kernel choice), so the drop need only exceed noise
//    (reference − MFU > z × uncertainty) while its size still has to pass the bar.
// Batches after a flagged one stay flagged while they remain below the same bar
// (one run, one decision). The first batches, with fewer than 4 predecessors,
// have no reference and are never flagged.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analyze/anomaly.hpp"
#include "analyze/series.hpp"

namespace shapescope::analyze {

struct NoiseAwareOptions {
  double utils_ratio = 0.85;      // the bar, as in the study's rule
  int window = 16;                // preceding unflagged batches the envelope is taken from
  double envelope_quantile = 0.9; // the envelope: this quantile of the window
  double false_alarm_rate = 0.05; // per profile, from noise alone
};

// Why the shortfall was judged more than noise.
enum class NoiseEvidence {
  shortfall,      // the run below the bar is below it by more than the uncertainty
  kernel_switch,  // a different kernel than at the reference, and the drop exceeds the uncertainty
  continues_run,  // the previous batch was flagged and this one is still below the same bar
};

struct NoiseAwareAnomaly {
  Anomaly anomaly;  // reference_utils is the envelope; reference_m the window batch at or just above it
  double bar_utils = 0;             // ratio × envelope
  double relative_uncertainty = 0;  // combined uncertainty of the test that decided, relative to the envelope
  double z = 0;                     // the threshold it was compared with, in units of that uncertainty
  std::size_t run_length = 1;       // batches below the bar from this one on (at most the window)
  NoiseEvidence evidence = NoiseEvidence::shortfall;
  bool uncertainty_from_data = true;  // false when the profile's ci95/stddev columns were used
};

std::vector<NoiseAwareAnomaly> noise_aware_findings(const Series& series, const NoiseAwareOptions& options);
std::vector<Anomaly> noise_aware_anomalies(const Series& series, const NoiseAwareOptions& options);

std::string to_string(NoiseEvidence evidence);

}  // namespace shapescope::analyze
