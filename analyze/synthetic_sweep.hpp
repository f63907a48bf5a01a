// Synthetic MFU sweeps with known cliffs: the ground truth against which an
// anomaly rule's sensitivity and false alarms are measured
// (bench/rule_sensitivity.cpp, tests/rule_sensitivity_test.cpp). Seeded: the
// same spec gives the same series on every machine (std::mt19937_64 and our
// own Box-Muller, not the library's unspecified distributions), and the noise
// of a seed is the same with or without cliffs (placement draws apart).
//
// What a sweep holds, modelled on the study's single-pass method on Hopper
// (data/h200: 5 launches per batch, clocks moving under power capping):
//   level     MFU rises with M and saturates, 0.8·M/(M + 200), M = 16, 20, 24, …
//   drift     slow clock drift: a sag of `drift` over the sweep plus slow waves
//             of about ±drift/2 (periods of hundreds of batches)
//   noise     relative, Gaussian, AR(1)-correlated from batch to batch (`ar1`),
//             heteroscedastic: louder at small M (short kernels), its σ falling
//             log-linearly from 4/3 to 3/4 of the nominal over the sweep
//   outliers  a batch in 200 gets an extra 2–4σ disturbance, slow 3 times in 4:
//             heavier tails than Gaussian, yet shallower than the cliffs sought
//             (a single pass cannot tell a −30% outlier from a −30% cliff)
//   kernels   the library's kernel name, changing harmlessly every ~500 batches
// Scatter ±s (the noise level) means: 95% of a cliff-free batch's noise lies
// within ±s of its level where the sweep is at its nominal loudness, σ = s/1.96.
//
// Injected changes (depth d: MFU × (1 − d)):
//   single_batch   one batch; the three batches on either side dip by a random
//                  10–40% of d (the neighbouring dips of the same cliff)
//   multi_batch    2–8 consecutive batches, same kernel name
//   kernel_switch  16–96 consecutive batches that ran another kernel
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/series.hpp"

namespace shapescope::analyze {

enum class CliffKind { single_batch, multi_batch, kernel_switch };

std::string to_string(CliffKind kind);

struct CliffRequest {
  CliffKind kind = CliffKind::single_batch;
  double depth = 0.3;  // −30%
};

struct SweepSpec {
  std::size_t batches = 2000;
  double scatter = 0.05;  // ±s, see above
  double ar1 = 0.3;       // lag-1 correlation of successive batches' noise
  double drift = 0.08;
  double outlier_rate = 0.005;
  std::vector<CliffRequest> cliffs;  // placed at random, apart from each other
  uint64_t seed = 1;
};

struct InjectedCliff {
  CliffKind kind = CliffKind::single_batch;
  double depth = 0;
  std::size_t first = 0;  // index into series.points
  std::size_t count = 1;  // batches at full depth
  std::size_t first_touched = 0, last_touched = 0;  // every batch the cliff changed, shoulders included
};

struct SyntheticSweep {
  Series series;
  std::vector<InjectedCliff> cliffs;  // in M order
  std::vector<double> scatter;        // per batch: ± of its noise there (louder at small M)
};

// No cliff starts before this batch: the rules need predecessors for a reference.
constexpr std::size_t kFirstCliffBatch = 64;
// Untouched batches kept between two cliffs' extents.
constexpr std::size_t kCliffGap = 20;

// Throws UserError when the cliffs do not fit into the sweep.
SyntheticSweep synthetic_sweep(const SweepSpec& spec);

}  // namespace shapescope::analyze
