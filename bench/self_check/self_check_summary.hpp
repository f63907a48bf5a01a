// The self-check's table: per shape, the M that `analyze` flags for our kernel and for the baseline side by side,
// and how much faster ours is; the totals the targets are stated in, each with met or missed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/self_check/self_check_shapes.hpp"

namespace shapescope::self_check {

// A kernel is "slower" at an M when its time exceeds the baseline's by more than this share.
inline constexpr double kSlowerTolerance = 0.05;
// The M from which the large-batch speed target counts.
inline constexpr int64_t kLargeM = 1024;

// One kernel's profile of one shape, as analyzed.
struct KernelResult {
  bool present = false;               // the profile exists
  std::map<int64_t, double> time_us;  // the M measured ok, with their kernel time
  std::vector<int64_t> flagged_m;     // M the default rule flags
  int64_t failed = 0;                 // rows measured but not ok (numerical, error, unsupported)
};

struct ShapeRow {
  CheckShape shape;
  KernelResult ours, baseline;
  int64_t expected_m = 0;        // M values the self-check sweeps
  bool complete() const;         // both kernels have a row (ok or not) at every M
  double flagged_share() const;  // ours' flagged M / ours' measured M
  // Speed ratio = baseline time / our time at the M both measured (> 1: ours faster).
  std::optional<double> geomean_ratio, geomean_ratio_large_m, worst_ratio;
  int64_t worst_m = 0;
  int64_t slower_points = 0;  // M where ours takes more than (1 + kSlowerTolerance) x the baseline's time
  int64_t compared_points = 0;
};

// Fills the ratios of a row from its two kernels.
ShapeRow compare_shape(const CheckShape& shape, KernelResult ours, KernelResult baseline, int64_t expected_m);

struct Target {
  std::string goal;      // the wording
  std::string measured;  // what the self-check found
  bool met = false;
  bool partial = false;  // not every shape it covers is measured yet
  bool covered = true;   // false: the run holds none of the shapes it speaks of (then neither met nor missed)
};
// "met", "missed" or "n/a".
std::string status_of(const Target& target);

struct Totals {
  int64_t catalog_shapes = 0, catalog_complete = 0;
  int64_t catalog_zero_flagged = 0, catalog_within_half_percent = 0;
  int64_t outside_shapes = 0, outside_complete = 0, outside_clean = 0;
  int64_t shapes_compared = 0, shapes_never_slower = 0, slower_points = 0, compared_points = 0;
  int64_t flagged_ours = 0, flagged_baseline = 0;  // flagged M over every shape
  std::optional<double> geomean_ratio, geomean_ratio_large_m;
  std::vector<Target> targets;
};

// Share of M a shape may have flagged and still meet the per-shape target.
inline constexpr double kFlaggedShareLimit = 0.005;
// Share of catalog shapes that must have no flagged M at all.
inline constexpr double kZeroFlaggedShare = 0.95;
// M >= kLargeM: the geometric-mean speed ratio ours must reach.
inline constexpr double kLargeMRatio = 1.1;

Totals total(const std::vector<ShapeRow>& rows);

struct KernelNames {
  std::string ours, baseline;
};
std::string summary_markdown(const std::vector<ShapeRow>& rows, const Totals& totals, const KernelNames& kernels,
                             const ShapeList& list);
std::string summary_csv(const std::vector<ShapeRow>& rows);
// The targets, one line each, for the terminal.
std::string targets_text(const Totals& totals);

}  // namespace shapescope::self_check
