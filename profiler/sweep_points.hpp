// The point loop of one profile file, dense or grouped alike: each M not yet in the file is
// measured through a callback, flagged when it ran off the steady clock, counted in the
// progress bar and added to the file (with --repeat, once all its passes ran, combined).
// With --m-search adaptive the M come from the search (adaptive_search.hpp) instead, M already
// in the file answering it without being measured again; the sidecar records the grid it refined.
// Stops between points when interrupt_requested().
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/profile_schema.hpp"
#include "profiler/m_search.hpp"
#include "profiler/point_phases.hpp"
#include "profiler/profile_file_start.hpp"
#include "profiler/progress.hpp"

namespace shapescope::profiler {

// What one M gave: its row (measured, or why not) and, where the caller records them, where its time went.
struct PointOutcome {
  ProfileRow row;
  std::optional<PointPhases> phases;  // the write and the point's wall time are the loop's
  double timed_s = 0;                 // kernel seconds under the timer
};

using MeasureM = std::function<PointOutcome(int64_t m)>;

struct FilePoints {
  ProfileFileStart& start;      // the file, the M values it already holds, its sidecar
  Progress& progress;
  std::string label;            // names the file in the progress bar
  double steady_clock_mhz = 0;  // 0: no clock to flag against
  MSearchOptions search;        // grid: every M
  std::vector<PredictedBoundary> boundaries;  // adaptive: where the kernel's configuration predicts a step
};

// grid: every M of `m_values` the file lacks, `passes` times each in repeat_schedule's order.
// adaptive: the M the search picks among `m_values`, once each (passes is 1).
void sweep_points(FilePoints& file, const std::vector<int64_t>& m_values, int passes, uint64_t seed,
                  const MeasureM& measure_m);

}  // namespace shapescope::profiler
