#include "profiler/sweep_points.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "profiler/repeat_sweep.hpp"

namespace shapescope::profiler {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One M through `measure_m`: its timer seconds counted, flagged when it ran off the steady clock, counted in the
// progress bar as `label` and handed to `write` (true when that wrote it to the file), its phases recorded.
// nullopt when an interrupt cut the point short: it is no row, and a resume measures it.
std::optional<ProfileRow> measure_one(FilePoints& file, int64_t m, const std::string& label, const MeasureM& measure_m,
                       const std::function<bool(const ProfileRow&)>& write) {
  SidecarContent& sidecar = file.start.sidecar;
  const auto point_start = Clock::now();
  PointOutcome outcome = measure_m(m);
  sidecar.timing.timed_s += outcome.timed_s;
  if (interrupt_requested()) return std::nullopt;
  flag_off_steady_clock(outcome.row, file.steady_clock_mhz);
  file.progress.advance(label);
  const auto write_start = Clock::now();
  if (write(outcome.row) && outcome.phases) (*outcome.phases)[PointPhase::write] = seconds_since(write_start);
  if (outcome.phases) {
    outcome.phases->close(seconds_since(point_start));
    sidecar.phases.add(*outcome.phases);
  }
  return outcome.row;
}

// What the search needs of a row.
SearchPoint search_point(const ProfileRow& row) {
  const bool measured = is_measured_status(row.status) && row.kernel_time_us > 0;
  return {measured, row.kernel_time_us, row.utils, row.kernel_name, measured ? row.ci95_us / row.kernel_time_us : 0};
}

void sweep_adaptive(FilePoints& file, const std::vector<int64_t>& m_values, const MeasureM& measure_m) {
  SidecarContent& sidecar = file.start.sidecar;
  std::map<int64_t, const ProfileRow*> kept;
  for (const ProfileRow& row : file.start.kept) kept[row.batch] = &row;
  AdaptiveOptions options;
  options.grid = m_values;
  options.boundaries = file.boundaries;
  options.max_points = file.search.max_points;
  const auto start = Clock::now();
  if (file.search.time_budget_s > 0)
    options.out_of_time = [&] { return seconds_since(start) >= file.search.time_budget_s; };
  const AdaptiveResult result = adaptive_search(
      options,
      [&](int64_t m) {
        if (const auto found = kept.find(m); found != kept.end()) {
          file.progress.advance(fmt::format("{} M={} (already measured)", file.label, m));
          return search_point(*found->second);
        }
        const auto write = [&](const ProfileRow& row) {
          file.start.file.add(row);
          return true;
        };
        const std::optional<ProfileRow> row = measure_one(file, m, fmt::format("{} M={}", file.label, m), measure_m, write);
        return row ? search_point(*row) : SearchPoint{};
      },
      interrupt_requested);
  sidecar.m_search = m_search_json({m_values, result});
}

}  // namespace

void sweep_points(FilePoints& file, const std::vector<int64_t>& m_values, int passes, uint64_t seed,
                  const MeasureM& measure_m) {
  if (file.search.mode == MSearch::adaptive) return sweep_adaptive(file, m_values, measure_m);
  std::map<int64_t, std::vector<ProfileRow>> pass_rows;  // --repeat: a row is kept once all its passes ran
  for (const ScheduledPoint& point : repeat_schedule(m_values, passes, seed)) {
    const int64_t m = point.m;
    if (interrupt_requested()) break;
    if (file.start.done.count(m)) {
      file.progress.advance(fmt::format("{} M={} (already measured)", file.label, m));
      continue;
    }
    const std::string label = passes > 1 ? fmt::format("{} M={} pass {}/{}", file.label, m, point.pass + 1, passes)
                                         : fmt::format("{} M={}", file.label, m);
    measure_one(file, m, label, measure_m, [&](const ProfileRow& row) {
      std::vector<ProfileRow>& of_m = pass_rows[m];
      of_m.push_back(row);
      if (int(of_m.size()) < passes) return false;
      file.start.file.add(passes > 1 ? combine_passes(of_m) : row);
      return true;
    });
  }
}

}  // namespace shapescope::profiler
