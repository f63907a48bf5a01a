// Where a measured point's wall time goes (a sweep's overhead is its wall time minus its timed
// kernel time). Each point's wall time is cut into phases that add up to it exactly; a ledger keeps every
// point's phases and reduces them to per-point medians and sums, printed after the sweep and stored in the
// sidecar (`sweep.point_phases`), so a device run gives the breakdown without a profiler attached.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace shapescope::profiler {

enum class PointPhase {
  prepare,          // the session prepares the M's activations and output
  check,            // poison, one run, the sampled comparison with the float64 reference
  rotation,         // graph timing: the further operand sets
  clocks,           // clock readings before and after the samples
  warm_up,          // warm-up runs, timers, graph capture and release, the hot probe
  timed,            // timed kernel time
  between_samples,  // the sample loop's wall time that is not timed: cache flushes, waits, launches
  release,          // freeing the point's buffers
  write,            // the CSV write (when one is due)
  other,            // the rest of the point: row, progress, bookkeeping
};
inline constexpr std::size_t kPointPhaseCount = std::size_t(PointPhase::other) + 1;
std::string_view phase_name(PointPhase phase);

struct PointPhases {
  std::array<double, kPointPhaseCount> seconds{};
  double& operator[](PointPhase phase) { return seconds[std::size_t(phase)]; }
  double operator[](PointPhase phase) const { return seconds[std::size_t(phase)]; }
  // Sets `other` to what the named phases leave of `wall_s` (never below 0).
  void close(double wall_s);
  double wall_s() const;
  double overhead_s() const { return wall_s() - (*this)[PointPhase::timed]; }
};

class PhaseLedger {
 public:
  void add(const PointPhases& point) { points_.push_back(point); }
  void merge(const PhaseLedger& other);
  int64_t points() const { return int64_t(points_.size()); }
  // Per point, in ms (0 without points).
  double median_ms(PointPhase phase) const;
  double median_wall_ms() const;
  double median_overhead_ms() const;
  double total_s(PointPhase phase) const;
  double total_wall_s() const;
  // {"points", "median_wall_ms", "median_overhead_ms", "phases": {name: {"median_ms", "total_s"}}}.
  nlohmann::json to_json() const;
  // The table printed after a sweep ("" without points).
  std::string table() const;

 private:
  std::vector<PointPhases> points_;
};

}  // namespace shapescope::profiler
