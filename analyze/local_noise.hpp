// How much one batch's MFU scatters, as the batches around it show it: the
// noise the noise-aware rule (noise_aware_rule.hpp) measures a drop against when
// the profile states no uncertainty of its own (the study's files).
//
// Only the noise, not the shape of the sweep nor its other anomalies:
//   - per kernel: batches that ran the same kernel are the closest thing to
//     repeated measurements; a library alternating a fast and a slow kernel (by
//     M mod 8, say) is structure. When most kernels ran fewer than 3 times among
//     the batches (tuned tables change kernel at every M), they are one group;
//   - around a trend: a Theil-Sen line per group (median of the pairwise slopes,
//     median intercept) takes out the sweep's rise at small M and slow clock
//     drift, and no dip can tilt it. Its abscissa is the batch index on a grid
//     sweep (measured in order, so drift follows the index) and M on a partial
//     profile (an adaptive search's batches are unevenly spaced in M);
//   - robustly: the spread starts from 1.4826 × the median absolute residual,
//     which the dips of neighbouring cliffs and outliers cannot inflate (up to
//     half the batches), and is then the root mean square of the residuals within
//     3 of those spreads, rescaled by the variance a normal keeps there (0.9733):
//     nearly the precision of a standard deviation on normal noise, so the
//     Student quantile the rule compares with stays small.
#pragma once

#include <cstddef>
#include <vector>

#include "analyze/series.hpp"

namespace shapescope::analyze {

struct LocalNoise {
  double relative_sigma = 0;  // σ of a batch's MFU, relative to its level
  std::size_t dof = 1;        // degrees of freedom of that estimate (residuals kept − 2 per line)
};

enum class TrendAbscissa { index, m };

// `batches`: indices into series.points, ascending; at least 3.
LocalNoise local_noise(const Series& series, const std::vector<std::size_t>& batches,
                       TrendAbscissa abscissa = TrendAbscissa::index);

}  // namespace shapescope::analyze
