#include "analyze/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/statistics.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

std::string group_of(const Series& series) {
  if (!series.model.empty()) return series.model;
  if (series.format == "aiter") return fmt::format("{} cu{}", series.device, series.multiprocessors);
  return series.device.empty() ? "unknown device" : series.device;
}

std::string shape_of(const Series& series) {
  std::string shape = series.module.empty() ? "" : series.module + " ";
  shape += fmt::format("N={} K={}", series.n, series.k);
  if (series.batch_count > 1) shape += fmt::format(" B={}", series.batch_count);
  return shape;
}

using PointKey = std::tuple<std::string, std::string, int64_t>;  // group, shape, M

std::map<PointKey, const SeriesPoint*> index_points(const std::vector<Series>& side) {
  std::map<PointKey, const SeriesPoint*> index;
  for (const Series& series : side) {
    for (const SeriesPoint& point : series.points) index[{group_of(series), shape_of(series), point.m}] = &point;
  }
  return index;
}

// A difference inside the measurement noise of both points is a tie: the 95%
// intervals when both rows carry them, else 1.96 combined standard deviations,
// else the fixed band on the speedup.
Outcome outcome_of(const SeriesPoint& a, const SeriesPoint& b, double speedup, const CompareOptions& options) {
  const double difference = std::abs(a.time_us - b.time_us);
  double noise = -1;
  if (a.ci95_us > 0 && b.ci95_us > 0) {
    noise = std::hypot(a.ci95_us, b.ci95_us);
  } else if (a.stddev_us > 0 && b.stddev_us > 0) {
    noise = 1.96 * std::hypot(a.stddev_us, b.stddev_us);
  }
  const bool tie = noise >= 0 ? difference <= noise : std::abs(speedup - 1) <= options.tie_band;
  if (tie) return Outcome::tie;
  return speedup > 1 ? Outcome::faster : Outcome::slower;
}

CompareGroup summarize(const std::string& name, const std::vector<const ComparedPoint*>& points) {
  CompareGroup group;
  group.name = name;
  group.points = points.size();
  double slowdown_sum = 0;
  std::vector<double> speedups;
  for (const ComparedPoint* point : points) {
    speedups.push_back(point->speedup);
    switch (point->outcome) {
      case Outcome::faster:
        ++group.faster;
        break;
      case Outcome::tie:
        ++group.ties;
        break;
      case Outcome::slower: {
        ++group.slower;
        const double slowdown = point->time_b_us / point->time_a_us - 1;
        slowdown_sum += slowdown;
        group.max_slowdown = std::max(group.max_slowdown, slowdown);
        break;
      }
    }
  }
  group.geomean_speedup = geometric_mean(speedups);
  group.mean_slowdown = group.slower > 0 ? slowdown_sum / static_cast<double>(group.slower) : 0;
  return group;
}

std::set<std::string> timings_of(const std::vector<Series>& side) {
  std::set<std::string> timings;
  for (const Series& series : side)
    if (!series.timing.empty()) timings.insert(series.timing);
  return timings;
}

void refuse_mixed_timing(const std::vector<Series>& a, const std::vector<Series>& b, const std::string& label_a,
                         const std::string& label_b) {
  const std::set<std::string> timings_a = timings_of(a), timings_b = timings_of(b);
  std::set<std::string> all = timings_a;
  all.insert(timings_b.begin(), timings_b.end());
  if (all.size() <= 1) return;
  throw UserError(fmt::format("{} was timed with {} and {} with {}: each mode adds its own floor per run; compare "
                              "profiles of one timing mode (profile --timing) or pass --allow-mixed-timing",
                              label_a, fmt::join(timings_a, "+"), label_b, fmt::join(timings_b, "+")));
}

}  // namespace

namespace {

std::string common_block_format(const std::vector<Series>& side) {
  std::set<std::string> formats;
  for (const Series& series : side) formats.insert(series.block_format);
  return formats.size() == 1 ? *formats.begin() : "";
}

}  // namespace

bool compares_formats(const CompareResult& result) {
  return !result.format_a.empty() && !result.format_b.empty() && result.format_a != result.format_b;
}

std::string winning_format(const CompareResult& result, const ComparedPoint& point) {
  switch (point.outcome) {
    case Outcome::faster: return result.format_b;
    case Outcome::slower: return result.format_a;
    case Outcome::tie: break;
  }
  return "tie";
}

CompareResult compare_series(const std::vector<Series>& a, const std::vector<Series>& b, const std::string& label_a,
                             const std::string& label_b, const CompareOptions& options) {
  if (!options.allow_mixed_timing) refuse_mixed_timing(a, b, label_a, label_b);
  CompareResult result;
  result.label_a = label_a;
  result.label_b = label_b;
  result.format_a = common_block_format(a);
  result.format_b = common_block_format(b);
  const auto index_a = index_points(a);
  const auto index_b = index_points(b);
  for (const auto& [key, point_a] : index_a) {
    const auto found = index_b.find(key);
    if (found == index_b.end()) {
      ++result.only_in_a;
      continue;
    }
    const SeriesPoint& point_b = *found->second;
    ComparedPoint compared;
    std::tie(compared.group, compared.shape, compared.m) = key;
    compared.time_a_us = point_a->time_us;
    compared.time_b_us = point_b.time_us;
    compared.speedup = point_a->time_us / point_b.time_us;
    compared.outcome = outcome_of(*point_a, point_b, compared.speedup, options);
    result.points.push_back(std::move(compared));
  }
  result.only_in_b = index_b.size() - result.points.size();
  if (result.points.empty()) {
    throw UserError(fmt::format("{} and {} share no (shape, M) point; compare profiles of the same shapes", label_a,
                                label_b));
  }

  // Points are ordered by (group, shape, M), so each group and shape is one run.
  std::map<std::string, std::vector<const ComparedPoint*>> by_group, by_shape;
  std::vector<const ComparedPoint*> all;
  for (const ComparedPoint& point : result.points) {
    by_group[point.group].push_back(&point);
    by_shape[point.group + " | " + point.shape].push_back(&point);
    all.push_back(&point);
  }
  for (const auto& [name, points] : by_group) result.per_group.push_back(summarize(name, points));
  for (const auto& [name, points] : by_shape) result.per_shape.push_back(summarize(name, points));
  result.overall = summarize("all", all);
  return result;
}

std::string compare_headline(const CompareResult& result) {
  const CompareGroup& all = result.overall;
  const std::string slower =
      all.slower == 0 ? "none slower"
                      : fmt::format("{} slower by {:.1f}% on average and up to {:.1f}%", all.slower,
                                    100 * all.mean_slowdown, 100 * all.max_slowdown);
  return fmt::format("{} of {} points faster with {}, {}, {} tied; geometric-mean speedup x{:.3f}", all.faster,
                     all.points, result.label_b, slower, all.ties, all.geomean_speedup);
}

std::vector<ComparedPoint> worst_slowdowns(const CompareResult& result, std::size_t count) {
  std::vector<ComparedPoint> slower;
  for (const ComparedPoint& point : result.points) {
    if (point.outcome == Outcome::slower) slower.push_back(point);
  }
  std::sort(slower.begin(), slower.end(),
            [](const ComparedPoint& x, const ComparedPoint& y) { return x.speedup < y.speedup; });
  if (slower.size() > count) slower.resize(count);
  return slower;
}

}  // namespace shapescope::analyze
