// The one place that turns a reader's raw rows into the Series contract:
// failed and implausible rows set aside, ordered by M, duplicate M resolved.
#pragma once

#include "analyze/series.hpp"

namespace shapescope::analyze {

// A measured row outside these bounds cannot be a real GEMM: an MFU above 2 (a
// CPU whose load dropped after its peak was measured reaches a little above 1),
// a negative MFU, or a time below a nanosecond. Such rows get this status and a note.
inline constexpr double kMaxPlausibleUtils = 2.0;
inline constexpr double kMinPlausibleTimeUs = 1e-3;
inline constexpr const char* kStatusImplausible = "implausible";

// `series.points` holds the rows as read (any order, duplicates, any status).
// Afterwards: points are ok/throttled and plausible, sorted by m, one per m (chosen
// by `dedup`, each duplicate recorded); other rows are in `excluded`. Throws
// UserError on an M below 1 and when no usable point is left.
void finalize_series(Series& series, Dedup dedup);

}  // namespace shapescope::analyze
