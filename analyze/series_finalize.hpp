// The one place that turns a reader's raw rows into the Series contract:
// failed rows set aside, ordered by M, duplicate M resolved.
#pragma once

#include "analyze/series.hpp"

namespace shapescope::analyze {

// `series.points` holds the rows as read (any order, duplicates, any status).
// Afterwards: points are ok/throttled, sorted by m, one per m (chosen by `dedup`,
// each duplicate recorded); other statuses are in `excluded`. Throws UserError
// on an M below 1 and when no usable point is left.
void finalize_series(Series& series, Dedup dedup);

}  // namespace shapescope::analyze
