#include "profiler/adaptive_search.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace shapescope::profiler {

namespace {

bool is_prime(int n) {
  if (n < 2) return false;
  for (int d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

// The measured points in grid order, each with whether it is low against its preceding level.
struct Measured {
  std::size_t index = 0;  // into the grid
  SearchPoint point;
  bool low = false;
  bool marginal = false;  // low, but within the tolerance of the bar: the analysis's own bar may fall on either side
};

// Low: below drop_ratio of the best of the last level_window preceding measured points that are not low
// themselves (so a long low stretch does not lower its own bar), less the noise that best of several carries.
// Needs two such points.
void mark_low(std::vector<Measured>& points, double data_noise, const AdaptiveOptions& options) {
  std::vector<double> level;  // utils of the points not low, in order
  for (Measured& p : points) {
    p.low = p.marginal = false;
    if (level.size() >= 2) {
      const std::size_t from = level.size() > std::size_t(options.level_window) ? level.size() - options.level_window : 0;
      const double best = *std::max_element(level.begin() + long(from), level.end());
      const double noise = std::max(p.point.rel_noise, data_noise);
      const double bar = options.drop_ratio * best * (1 - noise);
      p.low = p.point.utils < bar;
      p.marginal = p.low && p.point.utils > bar * (1 - std::max(options.min_tolerance, noise));
    }
    if (!p.low) level.push_back(p.point.utils);
  }
}

// The relative noise of one point where the measurements do not state theirs, from the noise probes: three
// neighbouring grid M, the middle one's deviation from its neighbours' mean (a deviation that has sqrt(1.5)
// times one point's noise). The median over probes, scaled to a standard deviation, so that a probe that
// straddles a step does not count.
double probe_noise(const std::map<std::size_t, SearchPoint>& known) {
  std::vector<double> deviations;
  for (auto it = known.begin(); it != known.end(); ++it) {
    const auto middle = std::next(it);
    if (middle == known.end()) break;
    const auto right = std::next(middle);
    if (right == known.end()) break;
    if (middle->first != it->first + 1 || right->first != middle->first + 1) continue;
    const SearchPoint &t0 = it->second, &t1 = middle->second, &t2 = right->second;
    if (!t0.measured || !t1.measured || !t2.measured || t1.time_us <= 0) continue;
    deviations.push_back(std::abs(t1.time_us - 0.5 * (t0.time_us + t2.time_us)) / t1.time_us);
  }
  if (deviations.size() < 4) return 0;
  std::nth_element(deviations.begin(), deviations.begin() + long(deviations.size() / 2), deviations.end());
  constexpr double kMedianOfAbsNormal = 0.6745;
  return deviations[deviations.size() / 2] / kMedianOfAbsNormal / std::sqrt(1.5);
}

double tolerance(const SearchPoint& a, const SearchPoint& b, double data_noise, const AdaptiveOptions& options) {
  return std::max({options.min_tolerance, options.noise_factor * a.rel_noise, options.noise_factor * b.rel_noise,
                   options.noise_factor * data_noise});
}

// How many grid steps an interval between measured points is refined down to, and how much its ends differ
// (the order of refinement); nullopt: nothing to look for inside.
struct Need {
  std::size_t target_gap = 1;
  double change = 0;
};

// `kernel_switch`: the launched kernel differs between a and b, and each agrees with its own outer neighbour
// (a kernel name that changes every few M, a configuration detail, says nothing about where to look).
std::optional<Need> interval_need(const Measured& a, const Measured& b, bool kernel_switch, double data_noise,
                                  const AdaptiveOptions& options) {
  const double tol = tolerance(a.point, b.point, data_noise, options);
  const double fall = a.point.utils > 0 ? 1.0 - b.point.utils / a.point.utils : 0.0;
  // A switch where MFU falls beyond the noise is located to the grid's resolution; one where it carries on or rises
  // (no anomaly at the switch: the end of a low stretch before it is found by the low rules), to low_stride.
  if (kernel_switch)
    return Need{fall > tol || a.low != b.low ? 1 : std::size_t(std::max(1, options.low_stride)), 1.0};
  if (a.low != b.low) return Need{1, std::max(std::abs(fall), tol)};
  // Inside a low stretch every M lies within a step of a measured one at low_stride 3. Where the stretch is near the
  // bar (its gradual ends), the analysis's own bar may fall anywhere: every other M is measured, so that an M it
  // flags and the search did not measure has both neighbours measured, the deeper of them flagged too.
  if (a.low && b.low) {
    const std::size_t stride = std::size_t(std::max(1, options.low_stride));
    return Need{a.marginal || b.marginal ? std::min<std::size_t>(stride, 2) : stride, std::max(fall, tol)};
  }
  // A fall that could make a point low by itself.
  if (fall > tol) return Need{1, fall};
  return std::nullopt;
}

// A point off the line through its neighbours' times: |time − interpolated| / time.
double off_trend(const Measured& left, const Measured& p, const Measured& right) {
  if (p.point.time_us <= 0) return 0;
  const double t = double(p.index - left.index) / double(right.index - left.index);
  const double line = left.point.time_us + t * (right.point.time_us - left.point.time_us);
  return std::abs(p.point.time_us - line) / p.point.time_us;
}

// The predicted boundaries the coarse pass measures: by predicted effect, largest first (then smaller M), those
// the refinement would not take for noise (options.min_tolerance), none within kBoundarySpacing grid steps of one
// already kept (the refinement finds an edge there from the kept one's two points), at most boundary_share of the
// grid.
constexpr std::ptrdiff_t kBoundarySpacing = 2;

std::vector<PredictedBoundary> coarse_boundaries(const AdaptiveOptions& options) {
  std::vector<PredictedBoundary> ranked = options.boundaries;
  std::stable_sort(ranked.begin(), ranked.end(), [](const PredictedBoundary& a, const PredictedBoundary& b) {
    return a.effect != b.effect ? a.effect > b.effect : a.m < b.m;
  });
  const auto most = std::size_t(options.boundary_share * double(options.grid.size()));
  std::vector<PredictedBoundary> kept;
  std::set<std::ptrdiff_t> kept_at;  // grid index at or after each kept boundary
  for (const PredictedBoundary& boundary : ranked) {
    if (kept.size() >= most || boundary.effect < options.min_tolerance) break;
    const std::ptrdiff_t at = std::lower_bound(options.grid.begin(), options.grid.end(), boundary.m) - options.grid.begin();
    const auto next = kept_at.lower_bound(at - kBoundarySpacing);
    if (next != kept_at.end() && *next <= at + kBoundarySpacing) continue;
    kept_at.insert(at);
    kept.push_back(boundary);
  }
  return kept;
}

// The parts of a split plan for each low point, so that the analysis can confirm the plan the exhaustive sweep's would
// find (a plan is a sum of measured times; a part never measured is no plan). A low M already has a plan when a later
// measured M is faster than split_ratio of its time (pad-up) or two measured M sum to it in less; otherwise the
// remainder M − q is wanted for the measured q whose plan the measured times predict fastest, the remainder's time
// interpolated between its measured neighbours, when that prediction beats the bar. One remainder per low M: once it
// is measured the prediction is exact, and a plan that does not hold asks for nothing more.
void want_split_parts(const std::vector<Measured>& points, const std::vector<int64_t>& grid,
                      const std::map<std::size_t, SearchPoint>& known, const AdaptiveOptions& options,
                      std::map<std::size_t, double>& wanted) {
  std::map<int64_t, double> time_at;  // measured M -> time
  for (const Measured& p : points) time_at[grid[p.index]] = p.point.time_us;
  // The time at m: measured, else interpolated between the measured M around it (nullopt outside them).
  const auto predicted_time = [&](int64_t m) -> std::optional<double> {
    const auto above = time_at.lower_bound(m);
    if (above == time_at.end()) return std::nullopt;
    if (above->first == m) return above->second;
    if (above == time_at.begin()) return std::nullopt;
    const auto below = std::prev(above);
    const double t = double(m - below->first) / double(above->first - below->first);
    return below->second + t * (above->second - below->second);
  };
  std::vector<double> fastest_after(points.size() + 1, std::numeric_limits<double>::infinity());
  for (std::size_t i = points.size(); i-- > 0;) fastest_after[i] = std::min(fastest_after[i + 1], points[i].point.time_us);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Measured& p = points[i];
    if (!p.low) continue;
    const int64_t m = grid[p.index];
    const double bar = options.split_ratio * p.point.time_us;
    if (fastest_after[i + 1] < bar) continue;
    bool planned = false;
    double best = bar;
    int64_t best_remainder = 0;
    for (std::size_t j = 0; j < i && !planned; ++j) {
      const int64_t remainder = m - grid[points[j].index];
      const std::optional<double> rest = predicted_time(remainder);
      if (!rest) continue;
      const double sum = points[j].point.time_us + *rest;
      planned = sum < bar && time_at.count(remainder);
      if (sum < best) {
        best = sum;
        best_remainder = remainder;
      }
    }
    if (planned || best_remainder == 0) continue;
    const auto at = std::lower_bound(grid.begin(), grid.end(), best_remainder);
    if (at == grid.end() || *at != best_remainder) continue;  // a remainder off the grid: no plan of measured parts
    const std::size_t index = std::size_t(at - grid.begin());
    if (known.count(index)) continue;
    double& change = wanted[index];
    change = std::max(change, 1 - best / p.point.time_us);
  }
}

// Measured M that are not low the refinement wants in the level window before an edge into a low stretch.
constexpr std::size_t kLevelPoints = 5;

// A noise probe every this many coarse points.
constexpr std::size_t kProbeEvery = 8;

}  // namespace

int coarse_stride_for(std::size_t grid_size) {
  int stride = std::max(11, int(grid_size / 400));
  while (!is_prime(stride)) ++stride;
  return stride;
}

AdaptiveResult adaptive_search(const AdaptiveOptions& options, const std::function<SearchPoint(int64_t m)>& measure,
                               const std::function<bool()>& stop) {
  AdaptiveResult result;
  const std::vector<int64_t>& grid = options.grid;
  if (grid.empty()) return result;
  std::map<std::size_t, SearchPoint> known;  // grid index -> its point
  bool halted = false;
  // Measures grid index i unless known; false when the budget or the caller stops the search.
  auto visit = [&](std::size_t i) {
    if (known.count(i)) return true;
    if (stop && stop()) {
      halted = true;
      return false;
    }
    if ((options.max_points > 0 && int64_t(known.size()) >= options.max_points) ||
        (options.out_of_time && options.out_of_time())) {
      result.budget_spent = true;
      return false;
    }
    known.emplace(i, measure(grid[i]));
    result.measured.push_back(grid[i]);
    return true;
  };

  // The coarse pass, in M order.
  std::set<std::size_t> coarse = {0, grid.size() - 1};
  const std::size_t stride = std::size_t(options.coarse_stride > 0 ? options.coarse_stride : coarse_stride_for(grid.size()));
  for (std::size_t i = 0; i < grid.size(); i += stride) coarse.insert(i);
  auto add_at_or_after = [&](int64_t m) {
    const auto at = std::lower_bound(grid.begin(), grid.end(), m);
    if (at == grid.end()) return;
    const std::size_t i = std::size_t(at - grid.begin());
    coarse.insert(i);
    if (i > 0 && grid[i] != m) coarse.insert(i - 1);  // the boundary itself is off the grid: both sides
  };
  // (Doubling stops before it passes the grid's end, which may lie anywhere up to int64's.)
  for (int64_t power = 1;; power *= 2) {
    add_at_or_after(power);
    if (power > grid.back() / 2) break;
  }
  for (const PredictedBoundary& boundary : coarse_boundaries(options)) {
    add_at_or_after(boundary.m);
    add_at_or_after(boundary.m + 1);
  }
  bool coarse_done = true;
  for (std::size_t i : coarse)
    if (!(coarse_done = visit(i))) break;
  // Noise probes, the two grid M after every kProbeEvery-th coarse one, where the measurements do not state
  // their noise (most of the coarse points without a ci95): what the probes would tell is known.
  std::size_t stating = 0, measured = 0;
  for (const auto& [index, point] : known) {
    measured += point.measured;
    stating += point.measured && point.rel_noise > 0;
  }
  if (coarse_done && 2 * stating <= measured) {
    for (std::size_t i = 0; i + 2 < grid.size(); i += stride * kProbeEvery)
      if (!visit(i + 1) || !visit(i + 2)) break;
  }
  result.coarse_points = int64_t(known.size());

  const double data_noise = probe_noise(known);

  while (!halted && !result.budget_spent) {
    std::vector<Measured> points, all;
    for (const auto& [index, point] : known) {
      all.push_back({index, point, false});
      if (point.measured) points.push_back(all.back());
    }
    mark_low(points, data_noise, options);
    std::map<std::size_t, double> wanted;  // grid index -> the change that asks for it
    // The grid index inside (a, b) nearest its middle that is not known yet (a hole found before,
    // e.g. an M the kernel does not support, is stepped over).
    auto want = [&](std::size_t a, std::size_t b, double change) {
      const std::size_t middle = (a + b) / 2;
      // (middle - step would wrap past 0 once the steps outgrow an interval that starts at the grid's first M.)
      for (std::size_t step = 0; middle > a + step || middle + step < b; ++step) {
        for (const std::size_t i : {middle - step, middle + step}) {
          if (i <= a || i >= b || known.count(i)) continue;
          double& at = wanted[i];
          at = std::max(at, change);
          return;
        }
      }
    };
    // A point off its neighbours' trend is looked at down to low_stride; the edges it leads to are then found by
    // the rules above, to the grid's resolution.
    const std::size_t low_stride = std::size_t(std::max(1, options.low_stride));
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
      const Measured &a = points[i], &b = points[i + 1];
      const bool kernel_switch = a.point.kernel_name != b.point.kernel_name &&
                                 (i == 0 || points[i - 1].point.kernel_name == a.point.kernel_name) &&
                                 (i + 2 == points.size() || points[i + 2].point.kernel_name == b.point.kernel_name);
      if (const std::optional<Need> need = interval_need(a, b, kernel_switch, data_noise, options);
          need && b.index - a.index > need->target_gap)
        want(a.index, b.index, need->change);
    }
    for (std::size_t i = 1; i + 1 < points.size(); ++i) {
      const Measured &left = points[i - 1], &p = points[i], &right = points[i + 1];
      if (left.low || p.low || right.low) continue;  // the low rules refine these
      const double off = off_trend(left, p, right);
      // As far off as the fall that makes a point low: a tooth between measured M that may hold an anomaly. Smaller
      // deviations, in a noisy profile, would send the refinement after the noise.
      const double bar = std::max(tolerance(left.point, right.point, data_noise, options), (1 - options.drop_ratio));
      if (off <= bar || off <= options.noise_factor * p.point.rel_noise) continue;
      if (p.index - left.index > low_stride) want(left.index, p.index, off);
      if (right.index - p.index > low_stride) want(p.index, right.index, off);
    }
    // The level before each edge into a low stretch, once found to the grid's resolution: every other grid M of
    // the level_window steps before it until that window holds kLevelPoints measured M that are not low, so that the
    // analysis judges the stretch against the M just before it, as an exhaustive sweep's would, and not against the
    // dips the refinement went after or coarse M far below.
    for (std::size_t i = 0; i + 1 < points.size(); ++i) {
      const Measured &a = points[i], &b = points[i + 1];
      if (a.low || !b.low || b.index - a.index != 1) continue;
      const std::size_t window = std::min(a.index, std::size_t(options.level_window));
      std::size_t level_points = 0;
      for (std::size_t j = i + 1; j-- > 0 && points[j].index + window >= a.index;) level_points += !points[j].low;
      for (std::size_t back = 2; back <= window && level_points < kLevelPoints; back += 2) {
        if (known.count(a.index - back)) continue;
        double& at = wanted[a.index - back];
        at = std::max(at, 1 - b.point.utils / a.point.utils);
        ++level_points;
      }
    }
    // A low M next to an M of another kernel that is not low: a library alternating kernels M by M (one of them
    // slow) hides a low stretch between M of the fast one; the M two steps on, which runs the low one's kernel
    // again, is looked at, and so on along the stretch.
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Measured& p = points[i];
      if (!p.low) continue;
      for (const bool before : {true, false}) {
        if (before ? i == 0 : i + 1 == points.size()) continue;
        const Measured& next = points[before ? i - 1 : i + 1];
        const std::size_t gap = before ? p.index - next.index : next.index - p.index;
        if (gap != 1 || next.low || next.point.kernel_name == p.point.kernel_name) continue;
        if (before ? p.index < 2 : p.index + 2 >= grid.size()) continue;
        const std::size_t again = before ? p.index - 2 : p.index + 2;
        if (known.count(again)) continue;
        double& at = wanted[again];
        at = std::max(at, 1 - p.point.utils / next.point.utils);
      }
    }
    want_split_parts(points, grid, known, options, wanted);
    // Where the kernel stops (or starts) running: a change of status between two pairs of known points that agree,
    // so that an M here and there the kernel refuses (a stride it needs) is no edge.
    for (std::size_t i = 1; i + 2 < all.size(); ++i) {
      const Measured &before = all[i - 1], &a = all[i], &b = all[i + 1], &after = all[i + 2];
      if (a.point.measured != b.point.measured && before.point.measured == a.point.measured &&
          after.point.measured == b.point.measured && b.index - a.index > 1)
        want(a.index, b.index, 1.0);
    }
    if (wanted.empty()) break;
    std::vector<std::pair<double, std::size_t>> order;
    for (const auto& [index, change] : wanted) order.push_back({change, index});
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [change, index] : order)
      if (!visit(index)) break;
  }
  return result;
}

}  // namespace shapescope::profiler
