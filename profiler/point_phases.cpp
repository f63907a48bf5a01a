#include "profiler/point_phases.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace shapescope::profiler {

namespace {

constexpr std::array<std::string_view, kPointPhaseCount> kNames = {
    "prepare", "check", "rotation", "clocks", "warm_up", "timed", "between_samples", "release", "write", "other"};

PointPhase phase_at(std::size_t index) { return PointPhase(index); }

double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(middle), values.end());
  const double upper = values[middle];
  if (values.size() % 2) return upper;
  return (*std::max_element(values.begin(), values.begin() + std::ptrdiff_t(middle)) + upper) / 2;
}

}  // namespace

std::string_view phase_name(PointPhase phase) { return kNames[std::size_t(phase)]; }

void PointPhases::close(double wall_s) {
  (*this)[PointPhase::other] = 0;
  (*this)[PointPhase::other] = std::max(0.0, wall_s - this->wall_s());
}

double PointPhases::wall_s() const { return std::accumulate(seconds.begin(), seconds.end(), 0.0); }

void PhaseLedger::merge(const PhaseLedger& other) {
  points_.insert(points_.end(), other.points_.begin(), other.points_.end());
}

double PhaseLedger::median_ms(PointPhase phase) const {
  std::vector<double> values;
  for (const PointPhases& point : points_) values.push_back(point[phase]);
  return 1e3 * median_of(std::move(values));
}

double PhaseLedger::median_wall_ms() const {
  std::vector<double> values;
  for (const PointPhases& point : points_) values.push_back(point.wall_s());
  return 1e3 * median_of(std::move(values));
}

double PhaseLedger::median_overhead_ms() const {
  std::vector<double> values;
  for (const PointPhases& point : points_) values.push_back(point.overhead_s());
  return 1e3 * median_of(std::move(values));
}

double PhaseLedger::total_s(PointPhase phase) const {
  double total = 0;
  for (const PointPhases& point : points_) total += point[phase];
  return total;
}

double PhaseLedger::total_wall_s() const {
  double total = 0;
  for (const PointPhases& point : points_) total += point.wall_s();
  return total;
}

nlohmann::json PhaseLedger::to_json() const {
  nlohmann::json phases = nlohmann::json::object();
  for (std::size_t i = 0; i < kPointPhaseCount; ++i)
    phases[std::string(kNames[i])] = {{"median_ms", median_ms(phase_at(i))}, {"total_s", total_s(phase_at(i))}};
  return {{"points", points()},
          {"median_wall_ms", median_wall_ms()},
          {"median_overhead_ms", median_overhead_ms()},
          {"phases", phases}};
}

std::string PhaseLedger::table() const {
  if (points_.empty()) return "";
  const double total_wall = total_wall_s();
  std::string text = fmt::format(
      "per measured point ({} points): median wall {:.2f} ms, median overhead (wall - timed) {:.2f} ms\n", points(),
      median_wall_ms(), median_overhead_ms());
  text += fmt::format("  {:<16} {:>10} {:>10} {:>7}\n", "phase", "median ms", "total s", "share");
  for (std::size_t i = 0; i < kPointPhaseCount; ++i) {
    const double total = total_s(phase_at(i));
    text += fmt::format("  {:<16} {:>10.3f} {:>10.3f} {:>6.1f}%\n", kNames[i], median_ms(phase_at(i)), total,
                        total_wall > 0 ? 100 * total / total_wall : 0.0);
  }
  return text;
}

}  // namespace shapescope::profiler
