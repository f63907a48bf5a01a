#include "analyze/noise_aware_rule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "analyze/local_noise.hpp"
#include "analyze/order_statistics.hpp"
#include "common/enum_names.hpp"
#include "common/statistics.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

double normal_density(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi); }

// Standard error of the q-quantile (at z_q = Φ⁻¹(q)) of `count` normal points, in units of their spread.
double quantile_standard_error(double q, double z_q, std::size_t count) {
  return std::sqrt(q * (1 - q) / static_cast<double>(count)) / normal_density(z_q);
}

// The point's own relative uncertainty of its time (= of its MFU), 0 when the profile does not say.
double stated_uncertainty(const SeriesPoint& point) {
  if (point.time_us <= 0) return 0;
  if (point.ci95_us > 0) return point.ci95_us / 1.959964 / point.time_us;
  if (point.stddev_us > 0) return point.stddev_us / point.time_us;
  return 0;
}

// The grid step of a profile that measured fewer than half of its grid's M, else 0. The grid is
// the one the profile names (an adaptive search's) or, where it names none, the finest spacing of
// the upper half of its M (a search refines down to the grid step at every edge it finds). In the
// upper half: the lower half may hold a finer start such as M = 1, 2, 3, ...
int64_t partial_grid_step(const Series& series) {
  const auto& points = series.points;
  if (points.size() < 2 * kMinimumWindow) return 0;
  const auto finest_upper_gap = [](const std::vector<int64_t>& ms) {
    int64_t step = 0;
    for (std::size_t j = ms.size() / 2 + 1; j < ms.size(); ++j) {
      const int64_t gap = ms[j] - ms[j - 1];
      if (gap > 0 && (step == 0 || gap < step)) step = gap;
    }
    return step;
  };
  std::vector<int64_t> ms;
  for (const SeriesPoint& point : points) ms.push_back(point.m);
  const int64_t step = finest_upper_gap(series.m_grid.empty() ? ms : series.m_grid);
  if (step == 0) return 0;
  const std::size_t half = points.size() / 2;
  const double grid_points = series.m_grid.empty()
                                 ? static_cast<double>(points.back().m - points[half].m) / static_cast<double>(step) + 1
                                 : static_cast<double>(series.m_grid.size()) / 2;
  return 2 * static_cast<double>(points.size() - half) < grid_points ? step : 0;
}

}  // namespace

NoiseAwareScan::NoiseAwareScan(const Series& series, const NoiseAwareOptions& options)
    : series_(series), options_(options) {
  if (options.window < static_cast<int>(kMinimumWindow)) {
    throw UserError(fmt::format("--noise-window {} is too small; use at least {}", options.window, kMinimumWindow));
  }
  if (!(options.envelope_quantile > 0.5 && options.envelope_quantile < 1)) {
    throw UserError(fmt::format("--envelope-quantile {} must lie in (0.5, 1)", options.envelope_quantile));
  }
  tail_ = options.false_alarm_rate / static_cast<double>(std::max<std::size_t>(series.points.size(), 1));
  normal_z_ = upper_normal_quantile(tail_);
  envelope_z_ = upper_normal_quantile(1 - options.envelope_quantile);
  partial_step_ = partial_grid_step(series);
}

double NoiseAwareScan::student_z(std::size_t dof) const {
  if (student_z_.size() <= dof) student_z_.resize(dof + 1, 0.0);
  if (student_z_[dof] == 0) student_z_[dof] = upper_student_quantile(tail_, static_cast<double>(dof));
  return student_z_[dof];
}

std::optional<NoiseAwareScan::Reference> NoiseAwareScan::reference(std::size_t i, bool always_judge) const {
  const auto& points = series_.points;
  const auto window_size = static_cast<std::size_t>(options_.window);
  if (unflagged_.size() < kMinimumWindow) return std::nullopt;
  std::vector<std::size_t> window(
      unflagged_.end() - static_cast<std::ptrdiff_t>(std::min(unflagged_.size(), window_size)), unflagged_.end());
  const std::vector<std::pair<std::size_t, int64_t>> below = unflagged_steps_below(i);
  if (partial_step_ > 0) {  // the batches a grid sweep's window would span, at least kMinimumLevelBatches
    window.clear();
    for (const auto& [j, steps] : below) {
      if (steps > static_cast<int64_t>(window_size) && window.size() >= kMinimumLevelBatches) break;
      window.insert(window.begin(), j);
    }
  }
  std::vector<double> utils;
  for (const std::size_t j : window) utils.push_back(points[j].utils);
  Reference reference;
  reference.envelope = quantile(utils, options_.envelope_quantile);
  double best_gap = INFINITY;
  for (const std::size_t j : window) {
    const double gap = points[j].utils - reference.envelope;
    if (gap >= -1e-15 && gap < best_gap) {
      best_gap = gap;
      reference.envelope_index = j;
    }
  }
  if (!always_judge && !(points[i].utils < options_.utils_ratio * reference.envelope)) return reference;

  // The noise of one window batch: what the profile states, else what the data show, from the
  // latest kNoiseBatches unflagged batches outside the candidate's neighbourhood.
  std::vector<double> stated;
  for (const std::size_t j : window) stated.push_back(stated_uncertainty(points[j]));
  if (median(stated) > 0) {
    reference.noise = median(stated);
  } else {
    std::vector<std::size_t> noise_batches;
    if (partial_step_ > 0) {
      for (const auto& [j, steps] : below) {
        if (steps > static_cast<int64_t>(kNoiseBatches + kNeighbourhood) && noise_batches.size() >= kMinimumNoiseBatches) {
          break;
        }
        if (steps > static_cast<int64_t>(kNeighbourhood)) noise_batches.push_back(j);
      }
    } else {
      for (auto k = unflagged_.rbegin(); k != unflagged_.rend() && noise_batches.size() < kNoiseBatches; ++k) {
        if (i - *k > kNeighbourhood) noise_batches.push_back(*k);
      }
    }
    if (noise_batches.size() < kMinimumWindow) noise_batches = window;
    std::sort(noise_batches.begin(), noise_batches.end());
    const LocalNoise noise =
        local_noise(series_, noise_batches, partial_step_ > 0 ? TrendAbscissa::m : TrendAbscissa::index);
    reference.noise = noise.relative_sigma;
    reference.dof = noise.dof;
  }
  reference.judged = true;
  reference.level = reference.envelope * std::max(0.0, 1 - envelope_z_ * reference.noise);
  reference.bar = options_.utils_ratio * reference.level;
  reference.level_sigma =
      reference.noise * quantile_standard_error(options_.envelope_quantile, envelope_z_, window.size());
  return reference;
}

NoiseAwareScan::DropTest NoiseAwareScan::drop_test(std::size_t i, std::size_t run, const Reference& reference) const {
  const auto& points = series_.points;
  // Had the run not dropped, each of its batches would scatter around the level.
  double sum = 0, variance = 0;
  for (std::size_t j = i; j < i + run; ++j) {
    sum += points[j].utils;
    const double stated = stated_uncertainty(points[j]);
    variance += std::pow(reference.level * (stated > 0 ? stated : reference.noise), 2);
  }
  DropTest test;
  test.level = reference.level;
  test.run_mean = sum / static_cast<double>(run);
  test.sigma = std::hypot(reference.level * reference.level_sigma, std::sqrt(variance) / static_cast<double>(run));
  // A noise estimated from the data is itself uncertain: Student's t with its degrees of freedom.
  test.z = stated_uncertainty(points[i]) > 0 || reference.dof == 0 ? normal_z_ : student_z(reference.dof);
  return test;
}

void NoiseAwareScan::accept(std::size_t i, bool flagged) {
  if (!flagged) unflagged_.push_back(i);
  if (flagged_.size() <= i) flagged_.resize(i + 1, false);
  flagged_[i] = flagged;
}

std::vector<std::pair<std::size_t, int64_t>> NoiseAwareScan::unflagged_steps_below(std::size_t i) const {
  std::vector<std::pair<std::size_t, int64_t>> below;
  if (partial_step_ == 0) return below;
  const auto& points = series_.points;
  const auto enough_steps = static_cast<int64_t>(std::max<std::size_t>(kNoiseBatches + kNeighbourhood, options_.window));
  int64_t steps = 0;
  for (std::size_t k = std::min(i, flagged_.size()); k-- > 0;) {
    if (flagged_[k]) continue;
    steps += std::max<int64_t>(1, (points[k + 1].m - points[k].m) / partial_step_);
    below.emplace_back(k, steps);
    if (steps > enough_steps && below.size() >= std::max(kMinimumNoiseBatches, kMinimumWindow)) break;
  }
  return below;
}

std::vector<NoiseAwareAnomaly> noise_aware_findings(const Series& series, const NoiseAwareOptions& options) {
  NoiseAwareScan scan(series, options);
  const auto& points = series.points;
  const std::size_t n = points.size();
  const auto window_size = static_cast<std::size_t>(options.window);
  std::vector<NoiseAwareAnomaly> found;
  bool previous_flagged = false;
  for (std::size_t i = 0; i < n; ++i) {
    bool flagged = false;
    const std::optional<NoiseAwareScan::Reference> reference = scan.reference(i);
    if (reference && reference->judged && points[i].utils < reference->bar) {
      std::size_t run = 1;
      while (run < window_size && i + run < n && points[i + run].utils < reference->bar) ++run;
      const NoiseAwareScan::DropTest test = scan.drop_test(i, run, *reference);
      NoiseAwareAnomaly candidate;
      if (test.beyond_noise()) {
        flagged = true;
        candidate.evidence = NoiseEvidence::drop;
      } else if (previous_flagged) {
        flagged = true;
        candidate.evidence = NoiseEvidence::continues_run;
      }
      if (flagged) {
        candidate.level_utils = reference->level;
        candidate.bar_utils = reference->bar;
        candidate.relative_uncertainty = test.sigma / reference->level;
        candidate.z = test.z;
        candidate.run_length = run;
        candidate.uncertainty_from_data = reference->dof > 0 && stated_uncertainty(points[i]) == 0;
        Anomaly& anomaly = candidate.anomaly;
        anomaly.index = i;
        anomaly.m = points[i].m;
        anomaly.time_us = points[i].time_us;
        anomaly.utils = points[i].utils;
        anomaly.reference_index = reference->envelope_index;
        anomaly.reference_m = points[reference->envelope_index].m;
        anomaly.reference_utils = reference->envelope;
        found.push_back(std::move(candidate));
      }
    }
    previous_flagged = flagged;
    scan.accept(i, flagged);
  }
  return found;
}

std::vector<Anomaly> noise_aware_anomalies(const Series& series, const NoiseAwareOptions& options) {
  std::vector<Anomaly> anomalies;
  for (const NoiseAwareAnomaly& finding : noise_aware_findings(series, options)) anomalies.push_back(finding.anomaly);
  return anomalies;
}

constexpr EnumName<NoiseEvidence> kNoiseEvidenceNames[] = {
    {NoiseEvidence::drop, "drop beyond noise"},
    {NoiseEvidence::continues_run, "continues a flagged run"},
};

std::string to_string(NoiseEvidence evidence) { return name_of(kNoiseEvidenceNames, evidence); }

}  // namespace shapescope::analyze
