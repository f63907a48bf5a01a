#include "analyze/noise_aware_rule.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include <fmt/format.h>

#include "common/statistics.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

// A reference needs this many predecessors, so that its upper quantile is not one point.
constexpr std::size_t kMinimumWindow = 4;

double normal_density(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi); }

// Linear interpolation between order statistics (numpy's default).
double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (position - static_cast<double>(below));
}

double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

// Standard error of a sample quantile of `count` normal points, in units of their spread.
double quantile_standard_error(double q, std::size_t count) {
  return std::sqrt(q * (1 - q) / static_cast<double>(count)) / normal_density(upper_normal_quantile(1 - q));
}

// The point's own relative uncertainty of its time (= of its MFU), 0 when the profile does not say.
double stated_uncertainty(const SeriesPoint& point) {
  if (point.time_us <= 0) return 0;
  if (point.ci95_us > 0) return point.ci95_us / 1.959964 / point.time_us;
  if (point.stddev_us > 0) return point.stddev_us / point.time_us;
  return 0;
}

struct Reference {
  double envelope = 0;
  std::size_t index = 0;             // the window batch at or just above the envelope
  double relative_sigma = 0;         // of the envelope
  double spread = 0;                 // the window's robust relative spread: the noise of a point without stated uncertainty
  std::vector<std::string> kernels;  // what ran at the window's upper half
};

// The robust relative spread (1.4826 × MAD → σ for normal noise) of the window's
// MFU around the median of the batches that ran the same kernel: repeated runs
// of one kernel at nearby M are the closest thing to repeated measurements, and
// a library alternating between a fast and a slow kernel (e.g. by M mod 8) is
// structure, not noise. Without kernel names, or when most kernels ran only once
// in the window (tuned tables that change kernel at every M), the window is one group.
double measurement_spread(const Series& series, const std::vector<std::size_t>& window) {
  const auto deviations_around_medians = [](const std::map<std::string, std::vector<double>>& groups) {
    std::vector<double> deviations;
    for (const auto& [kernel, utils] : groups) {
      if (utils.size() < 2) continue;  // a lone point has no spread of its own
      const double middle = median(utils);
      for (const double u : utils) deviations.push_back(std::abs(u / middle - 1));
    }
    return deviations;
  };
  std::map<std::string, std::vector<double>> by_kernel, whole;
  for (const std::size_t j : window) {
    by_kernel[series.points[j].kernel_name].push_back(series.points[j].utils);
    whole[""].push_back(series.points[j].utils);
  }
  std::vector<double> deviations = deviations_around_medians(by_kernel);
  if (2 * deviations.size() < window.size()) deviations = deviations_around_medians(whole);
  return 1.4826 * median(deviations);
}

Reference make_reference(const Series& series, const std::vector<std::size_t>& window, double q) {
  const auto& points = series.points;
  std::vector<double> utils;
  for (const std::size_t j : window) utils.push_back(points[j].utils);
  Reference reference;
  reference.envelope = quantile(utils, q);
  const double middle = median(utils);
  reference.spread = measurement_spread(series, window);

  double best_gap = INFINITY;
  std::vector<double> window_sigma;
  for (const std::size_t j : window) {
    const SeriesPoint& point = points[j];
    const double gap = point.utils - reference.envelope;
    if (gap >= -1e-15 && gap < best_gap) {
      best_gap = gap;
      reference.index = j;
    }
    const double stated = stated_uncertainty(point);
    window_sigma.push_back(stated > 0 ? stated : reference.spread);
    if (point.utils >= middle && !point.kernel_name.empty()) reference.kernels.push_back(point.kernel_name);
  }
  reference.relative_sigma = median(window_sigma) * quantile_standard_error(q, window.size());
  return reference;
}

}  // namespace

std::vector<NoiseAwareAnomaly> noise_aware_findings(const Series& series, const NoiseAwareOptions& options) {
  if (options.window < static_cast<int>(kMinimumWindow)) {
    throw UserError(fmt::format("--noise-window {} is too small; use at least {}", options.window, kMinimumWindow));
  }
  if (!(options.envelope_quantile > 0 && options.envelope_quantile < 1)) {
    throw UserError(fmt::format("--envelope-quantile {} must lie in (0, 1)", options.envelope_quantile));
  }
  const auto& points = series.points;
  const std::size_t n = points.size();
  std::vector<NoiseAwareAnomaly> found;
  if (n == 0) return found;
  const double tail = options.false_alarm_rate / static_cast<double>(n);
  const double z_stated = upper_normal_quantile(tail);
  // With the noise estimated from a window of w batches, the standardized drop follows
  // Student's t with w − 1 degrees of freedom: heavier tails than the normal.
  // Computed when a window size first needs it (most points see a full window).
  std::vector<double> z_estimated(static_cast<std::size_t>(options.window) + 1, 0.0);
  const auto z_for_window = [&](std::size_t w) {
    if (z_estimated[w] == 0) z_estimated[w] = upper_student_quantile(tail, static_cast<double>(w - 1));
    return z_estimated[w];
  };
  const auto window_size = static_cast<std::size_t>(options.window);

  std::vector<std::size_t> window;  // the latest unflagged batches, oldest first
  bool previous_flagged = false;
  for (std::size_t i = 0; i < n; ++i) {
    bool flagged = false;
    if (window.size() >= kMinimumWindow) {
      const Reference reference = make_reference(series, window, options.envelope_quantile);
      const auto sigma_of = [&](std::size_t j) {
        const double stated = stated_uncertainty(points[j]);
        return stated > 0 ? stated : reference.spread;
      };
      const double bar = options.utils_ratio * reference.envelope;
      if (points[i].utils < bar) {
        NoiseAwareAnomaly candidate;
        candidate.bar_utils = bar;
        candidate.uncertainty_from_data = stated_uncertainty(points[i]) == 0;
        const double z = candidate.uncertainty_from_data ? z_for_window(window.size()) : z_stated;
        candidate.z = z;
        std::size_t run = 1;
        while (run < window_size && i + run < n && points[i + run].utils < bar) ++run;
        double sum = 0, variance = 0;
        for (std::size_t j = i; j < i + run; ++j) {
          sum += points[j].utils;
          variance += std::pow(points[j].utils * sigma_of(j), 2);
        }
        const double run_mean = sum / static_cast<double>(run);
        const double run_sigma = std::sqrt(variance) / static_cast<double>(run);
        const double shortfall_sigma = std::hypot(bar * reference.relative_sigma, run_sigma);
        const double drop_sigma =
            std::hypot(reference.envelope * reference.relative_sigma, points[i].utils * sigma_of(i));
        const bool kernel_switched =
            !points[i].kernel_name.empty() && !reference.kernels.empty() &&
            std::find(reference.kernels.begin(), reference.kernels.end(), points[i].kernel_name) ==
                reference.kernels.end();
        candidate.run_length = run;
        if (bar - run_mean > z * shortfall_sigma) {
          flagged = true;
          candidate.evidence = NoiseEvidence::shortfall;
          candidate.relative_uncertainty = shortfall_sigma / reference.envelope;
        } else if (previous_flagged) {
          flagged = true;
          candidate.evidence = NoiseEvidence::continues_run;
          candidate.relative_uncertainty = shortfall_sigma / reference.envelope;
        } else if (kernel_switched && reference.envelope - points[i].utils > z * drop_sigma) {
          flagged = true;
          candidate.evidence = NoiseEvidence::kernel_switch;
          candidate.relative_uncertainty = drop_sigma / reference.envelope;
        }
        if (flagged) {
          Anomaly& anomaly = candidate.anomaly;
          anomaly.index = i;
          anomaly.m = points[i].m;
          anomaly.time_us = points[i].time_us;
          anomaly.utils = points[i].utils;
          anomaly.reference_index = reference.index;
          anomaly.reference_m = points[reference.index].m;
          anomaly.reference_utils = reference.envelope;
          found.push_back(std::move(candidate));
        }
      }
    }
    previous_flagged = flagged;
    if (!flagged) {
      window.push_back(i);
      if (window.size() > window_size) window.erase(window.begin());
    }
  }
  return found;
}

std::vector<Anomaly> noise_aware_anomalies(const Series& series, const NoiseAwareOptions& options) {
  std::vector<Anomaly> anomalies;
  for (const NoiseAwareAnomaly& finding : noise_aware_findings(series, options)) anomalies.push_back(finding.anomaly);
  return anomalies;
}

std::string to_string(NoiseEvidence evidence) {
  switch (evidence) {
    case NoiseEvidence::shortfall:
      return "shortfall beyond noise";
    case NoiseEvidence::kernel_switch:
      return "kernel switch, drop beyond noise";
    case NoiseEvidence::continues_run:
      return "continues a flagged run";
  }
  return "unknown";
}

}  // namespace shapescope::analyze
