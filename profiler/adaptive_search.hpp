// `profile --m-search adaptive`: which M of a grid to measure, a pure algorithm over a
// measure(M) callback (the sweep measures on a device, --replay answers from a recorded profile,
// the tests from a formula).
//
// 1. A coarse pass: the grid's ends, its powers of two, the boundaries the caller predicts (the
//    kernel's tile and wave boundaries, each with the M after it; those of the largest predicted
//    effect, at most `boundary_share` of the grid, none whose effect the refinement would take for
//    noise, none within two grid steps of one kept), every `coarse_stride`-th grid M
//    (a prime stride, so that the coarse points do not alias with power-of-two tiles), and noise
//    probes: three neighbouring grid M every eighth coarse point, whose scatter is the noise where
//    the measurements do not state theirs (ci95).
// 2. Refinement, round after round, of each interval between neighbouring measured M:
//      - to the grid's resolution where the kernel stops or starts running, where MFU falls beyond
//        the noise, where one end is low (MFU below drop_ratio of what the preceding measured M
//        reached, less the noise) and the other not, and where the launched kernel switches with
//        a fall of MFU (each side agreeing with its outer neighbour: a name that changes every
//        few M says nothing); a switch where MFU carries on or rises, to `low_stride` grid steps;
//      - to `low_stride` grid steps inside a low stretch, so that every M of it lies within a step
//        of a measured one, and to two where the stretch is near the bar (within min_tolerance of
//        it: its gradual ends, where the analysis's bar may fall either side of the search's), so
//        that an unmeasured M there has both neighbours measured;
//      - the level window before each edge into a low stretch (found to the grid's resolution):
//        every other grid M of the level_window steps before it, until five M that are not low lie
//        there, so that the analysis judges the stretch against the M just before it and not
//        against the dips the refinement went after;
//      - two grid steps on from a low M whose neighbour at one step runs another kernel and is not
//        low (a library alternating kernels M by M, one of them slow, hides a low stretch between
//        M of the fast one), and so on along the stretch;
//      - the parts of a split plan at each low M: the remainder M − q for the measured q whose plan
//        the measured times (the remainder's interpolated) predict fastest, when the prediction beats
//        split_ratio of the M's time and no measured parts or later measured M beat it already;
//      - around a point off the line through its neighbours' times by as much as the fall that
//        makes a point low, none of the three low (a tooth between coarse points; the edges inside
//        are then found as above).
//    Each round measures the intervals' midpoints (the nearest M not yet asked), the largest change
//    first, until nothing is left to refine or the budget is spent.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace shapescope::profiler {

// What the search needs of a measured M.
struct SearchPoint {
  bool measured = false;     // a usable time (ok or throttled); otherwise only the change of status counts
  double time_us = 0;
  double utils = 0;          // MFU, or any throughput proportional to FLOPs / time
  std::string kernel_name;   // what the library launched at this M
  double rel_noise = 0;      // ci95 / time where the measurement says, else 0
};

// An M where the kernel's configuration predicts its time to step up, and by how much (relative).
struct PredictedBoundary {
  int64_t m = 0;
  double effect = 0;
};

struct AdaptiveOptions {
  std::vector<int64_t> grid;        // sorted, unique: every M the search may measure
  std::vector<PredictedBoundary> boundaries;  // any order
  // The most predicted boundaries the coarse pass measures, as a share of the grid (each costs two M): a
  // configuration may predict one at almost every M, and each measured one costs a point of the budget.
  double boundary_share = 1.0 / 64;
  int coarse_stride = 0;            // grid steps between coarse M; 0: coarse_stride_for(grid size)
  // low: MFU below this fraction of the best of the preceding measured M. A little above the analysis's bar
  // (kStudyUtilsRatio, 0.85, of a level net of noise): the best of a few points lies above that level.
  double drop_ratio = 0.86;
  int level_window = 8;             // the level: the best of this many preceding measured M that are not low
  double min_tolerance = 0.03;      // relative change counted as more than noise, at least
  double noise_factor = 3;          // ... and at least this many times a point's own relative noise
  int low_stride = 3;               // grid steps between measured M inside a low stretch
  double split_ratio = 0.9;         // a split plan beats the low M's time by this (the split search's bar)
  int64_t max_points = 0;           // 0: no cap (resumed M count too)
  std::function<bool()> out_of_time;  // true: stop before the next point (--time-budget); empty: never
};

struct AdaptiveResult {
  std::vector<int64_t> measured;  // in the order asked
  int64_t coarse_points = 0;
  bool budget_spent = false;      // stopped by max_points or out_of_time with refinement left
};

// A prime of at least 11, near grid_size / 400: a coarse pass of a few hundred M at most.
int coarse_stride_for(std::size_t grid_size);

// Stops early (budget_spent false, fewer points) when `measure` is never called again because the
// caller was interrupted: `stop` is checked before each point.
AdaptiveResult adaptive_search(const AdaptiveOptions& options, const std::function<SearchPoint(int64_t m)>& measure,
                               const std::function<bool()>& stop = {});

}  // namespace shapescope::profiler
