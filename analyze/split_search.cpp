#include "analyze/split_search.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Tables are indexed by M; beyond this the memory is not worth it.
constexpr int64_t kLargestTableM = int64_t{1} << 22;

int kind_rank(PlanKind kind) { return static_cast<int>(kind); }

// min over x in [1, last_x] of big[-x] + rest[x]. Eight independent minima keep
// the loop from waiting on one dependency chain; this loop is most of the
// analysis time (a 4-way plan joins two 2-part tables at every split point).
double min_join(const double* big, const double* rest, int64_t last_x) {
  double lanes[8] = {kInfinity, kInfinity, kInfinity, kInfinity, kInfinity, kInfinity, kInfinity, kInfinity};
  int64_t x = 1;
  for (; x + 7 <= last_x; x += 8) {
    for (int lane = 0; lane < 8; ++lane) lanes[lane] = std::min(lanes[lane], big[-(x + lane)] + rest[x + lane]);
  }
  for (; x <= last_x; ++x) lanes[0] = std::min(lanes[0], big[-x] + rest[x]);
  for (int lane = 1; lane < 8; ++lane) lanes[0] = std::min(lanes[0], lanes[lane]);
  return lanes[0];
}

}  // namespace

constexpr EnumName<PlanKind> kPlanKindNames[] = {
    {PlanKind::study_pair, "study_pair"},
    {PlanKind::halves, "halves"},
    {PlanKind::k_way, "k_way"},
    {PlanKind::pad_up, "pad_up"},
};

std::string to_string(PlanKind kind) { return name_of(kPlanKindNames, kind); }

std::optional<SplitPlan> PlanSet::best(double split_ratio) const {
  std::optional<SplitPlan> best;
  for (const auto* candidate : {&study_pair, &halves, &k_way, &pad_up}) {
    if (!*candidate || !((*candidate)->predicted_us < time_us * split_ratio)) continue;
    const SplitPlan& plan = **candidate;
    const bool better =
        !best || plan.predicted_us < best->predicted_us ||
        (plan.predicted_us == best->predicted_us &&
         (plan.parts.size() < best->parts.size() ||
          (plan.parts.size() == best->parts.size() && kind_rank(plan.kind) < kind_rank(best->kind))));
    if (better) best = plan;
  }
  return best;
}

SplitSearch::SplitSearch(const Series& series, const SplitOptions& options, int64_t largest_target)
    : series_(series), options_(options) {
  if (options_.max_parts < 1) throw UserError("--max-parts must be at least 1 (1 disables splitting)");
  if (largest_target > kLargestTableM) {
    throw UserError(fmt::format("{}: M up to {} is beyond the split search's limit of {}; analyze a smaller M range",
                                series.source, largest_target, kLargestTableM));
  }
  const std::vector<SeriesPoint>& points = series_.points;
  limit_ = std::max<int64_t>(largest_target, 0);
  index_of_m_.assign(static_cast<std::size_t>(limit_) + 1, -1);
  std::vector<int64_t> sizes;  // measured M ≤ limit_, ascending
  for (std::size_t i = 0; i < points.size() && points[i].m <= limit_; ++i) {
    index_of_m_[static_cast<std::size_t>(points[i].m)] = static_cast<int32_t>(i);
    sizes.push_back(points[i].m);
  }

  // Exact-k tables up to ceil(max_parts / 2): a plan of more parts is two table
  // entries joined at one split point (k_way), so larger tables are never needed.
  full_levels_ = std::max(1, (options_.max_parts + 1) / 2);
  const std::size_t width = static_cast<std::size_t>(limit_) + 1;
  cost_.assign(static_cast<std::size_t>(full_levels_) + 1, {});
  first_part_.assign(static_cast<std::size_t>(full_levels_) + 1, {});
  cost_[1].assign(width, kInfinity);
  for (const int64_t m : sizes) cost_[1][static_cast<std::size_t>(m)] = time_of(m);
  const double overhead = options_.launch_overhead_us;
  if (full_levels_ >= 2) {
    // All pairs a ≤ b once: O(n²/2), pruned by a + b ≤ limit.
    std::vector<double>& cost = cost_[2];
    std::vector<int32_t>& first = first_part_[2];
    cost.assign(width, kInfinity);
    first.assign(width, -1);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const int64_t a = sizes[i];
      const double time_a = time_of(a) + overhead;
      for (std::size_t j = i; j < sizes.size() && a + sizes[j] <= limit_; ++j) {
        const std::size_t x = static_cast<std::size_t>(a + sizes[j]);
        const double candidate = time_a + time_of(sizes[j]);
        if (candidate < cost[x]) {
          cost[x] = candidate;
          first[x] = static_cast<int32_t>(a);
        }
      }
    }
  }
  for (int level = 3; level <= full_levels_; ++level) {
    // Only for max_parts ≥ 5: O(n · limit) per level.
    const std::vector<double>& previous = cost_[static_cast<std::size_t>(level - 1)];
    std::vector<double>& cost = cost_[static_cast<std::size_t>(level)];
    std::vector<int32_t>& first = first_part_[static_cast<std::size_t>(level)];
    cost.assign(width, kInfinity);
    first.assign(width, -1);
    for (std::size_t x = 1; x < width; ++x) {
      for (std::size_t i = 0; i < sizes.size() && sizes[i] < static_cast<int64_t>(x); ++i) {
        const double candidate = time_of(sizes[i]) + previous[x - static_cast<std::size_t>(sizes[i])] + overhead;
        if (candidate < cost[x]) {
          cost[x] = candidate;
          first[x] = static_cast<int32_t>(sizes[i]);
        }
      }
    }
  }

  fastest_from_.resize(points.size());
  for (std::size_t i = points.size(); i-- > 0;) {
    const bool last = i + 1 == points.size();
    // "<=" so that among equally fast points the smallest M' (least padding) wins.
    fastest_from_[i] = last || points[i].time_us <= points[fastest_from_[i + 1]].time_us ? i : fastest_from_[i + 1];
  }
}

double SplitSearch::time_of(int64_t m) const {
  if (m < 1 || m > limit_) return kInfinity;
  const int32_t index = index_of_m_[static_cast<std::size_t>(m)];
  return index < 0 ? kInfinity : series_.points[static_cast<std::size_t>(index)].time_us;
}

std::vector<int64_t> SplitSearch::decomposition(int parts, int64_t m) const {
  std::vector<int64_t> result;
  for (; parts > 1; --parts) {
    const int64_t first = first_part_[static_cast<std::size_t>(parts)][static_cast<std::size_t>(m)];
    result.push_back(first);
    m -= first;
  }
  result.push_back(m);
  return result;
}

SplitPlan SplitSearch::make_plan(PlanKind kind, std::vector<int64_t> parts, double predicted_us,
                                 double time_us) const {
  std::sort(parts.begin(), parts.end());
  return {kind, std::move(parts), predicted_us, (time_us - predicted_us) / time_us};
}

std::optional<SplitPlan> SplitSearch::study_pair(std::size_t point_index) const {
  const SeriesPoint& target = series_.points.at(point_index);
  const int64_t m = target.m;
  double best_sum = kInfinity;
  int64_t best_first = 0;
  // m1 ascending with a strict "<": the study keeps the first minimal pair.
  for (std::size_t i = 0; i < point_index && 2 * series_.points[i].m < m; ++i) {
    const int64_t m1 = series_.points[i].m;
    const double sum = series_.points[i].time_us + time_of(m - m1);
    if (sum < best_sum) {
      best_sum = sum;
      best_first = m1;
    }
  }
  if (!(best_sum < target.time_us * options_.split_ratio)) return std::nullopt;
  return make_plan(PlanKind::study_pair, {best_first, m - best_first}, best_sum + options_.launch_overhead_us,
                   target.time_us);
}

std::optional<SplitPlan> SplitSearch::halves(std::size_t point_index) const {
  const SeriesPoint& target = series_.points.at(point_index);
  if (target.m % 2 != 0) return std::nullopt;
  const double predicted = 2 * time_of(target.m / 2) + options_.launch_overhead_us;
  if (!(predicted < target.time_us * options_.split_ratio)) return std::nullopt;
  return make_plan(PlanKind::halves, {target.m / 2, target.m / 2}, predicted, target.time_us);
}

std::optional<SplitPlan> SplitSearch::k_way(std::size_t point_index) const {
  const SeriesPoint& target = series_.points.at(point_index);
  const int64_t m = target.m;
  if (m > limit_ || options_.max_parts < 2) return std::nullopt;
  const double overhead = options_.launch_overhead_us;
  double best = kInfinity;
  std::vector<int64_t> best_parts;
  for (int parts = 2; parts <= options_.max_parts; ++parts) {
    if (parts <= full_levels_) {
      const double cost = cost_[static_cast<std::size_t>(parts)][static_cast<std::size_t>(m)];
      if (cost < best) {
        best = cost;
        best_parts = decomposition(parts, m);
      }
      continue;
    }
    // Join a full_levels_-part cover of m - x with a `rest`-part cover of x.
    const int big = full_levels_;
    const int rest = parts - big;
    // Symmetric when both sides have the same part count: half the split points suffice.
    const int64_t last_x = rest == big ? m / 2 : m - 1;
    const double* big_cost = cost_[static_cast<std::size_t>(big)].data() + m;  // big_cost[-x] covers m - x
    const double* rest_cost = cost_[static_cast<std::size_t>(rest)].data();
    const double joined = min_join(big_cost, rest_cost, last_x) + overhead;
    if (!(joined < best)) continue;
    // Second pass only for a new best: the first x that reaches the minimum.
    int64_t joined_x = 1;
    while (big_cost[-joined_x] + rest_cost[joined_x] + overhead != joined) ++joined_x;
    best = joined;
    best_parts = decomposition(big, m - joined_x);
    const std::vector<int64_t> rest_parts = decomposition(rest, joined_x);
    best_parts.insert(best_parts.end(), rest_parts.begin(), rest_parts.end());
  }
  if (!(best < target.time_us * options_.split_ratio)) return std::nullopt;
  return make_plan(PlanKind::k_way, std::move(best_parts), best, target.time_us);
}

std::optional<SplitPlan> SplitSearch::pad_up(std::size_t point_index) const {
  const SeriesPoint& target = series_.points.at(point_index);
  if (point_index + 1 >= series_.points.size()) return std::nullopt;
  const SeriesPoint& padded = series_.points[fastest_from_[point_index + 1]];
  if (!(padded.time_us < target.time_us * options_.split_ratio)) return std::nullopt;
  return make_plan(PlanKind::pad_up, {padded.m}, padded.time_us, target.time_us);
}

PlanSet SplitSearch::plans_for(std::size_t point_index) const {
  if (series_.points.at(point_index).m > limit_) {
    throw std::invalid_argument(fmt::format("SplitSearch: M={} is beyond the tables (built up to {})",
                                            series_.points[point_index].m, limit_));
  }
  PlanSet plans;
  plans.time_us = series_.points.at(point_index).time_us;
  plans.study_pair = study_pair(point_index);
  plans.halves = halves(point_index);
  plans.k_way = k_way(point_index);
  plans.pad_up = pad_up(point_index);
  return plans;
}

}  // namespace shapescope::analyze
