#include "profiler/sweep_points.hpp"

#include <chrono>
#include <map>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "profiler/repeat_sweep.hpp"

namespace shapescope::profiler {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

void sweep_points(FilePoints& file, const std::vector<int64_t>& m_values, int passes, uint64_t seed,
                  const MeasureM& measure_m) {
  SidecarContent& sidecar = file.start.sidecar;
  std::map<int64_t, std::vector<ProfileRow>> pass_rows;  // --repeat: a row is kept once all its passes ran
  for (const ScheduledPoint& point : repeat_schedule(m_values, passes, seed)) {
    const int64_t m = point.m;
    if (interrupt_requested()) break;
    if (file.start.done.count(m)) {
      file.progress.advance(fmt::format("{} M={} (already measured)", file.label, m));
      continue;
    }
    const auto point_start = Clock::now();
    PointOutcome outcome = measure_m(m);
    sidecar.timing.timed_s += outcome.timed_s;
    flag_off_steady_clock(outcome.row, file.steady_clock_mhz);
    file.progress.advance(passes > 1 ? fmt::format("{} M={} pass {}/{}", file.label, m, point.pass + 1, passes)
                                     : fmt::format("{} M={}", file.label, m));
    std::vector<ProfileRow>& of_m = pass_rows[m];
    of_m.push_back(outcome.row);
    if (int(of_m.size()) == passes) {
      const auto write_start = Clock::now();
      file.start.file.add(passes > 1 ? combine_passes(of_m) : outcome.row);
      if (outcome.phases) (*outcome.phases)[PointPhase::write] = seconds_since(write_start);
    }
    if (outcome.phases) {
      outcome.phases->close(seconds_since(point_start));
      sidecar.phases.add(*outcome.phases);
    }
  }
}

}  // namespace shapescope::profiler
