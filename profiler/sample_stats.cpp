#include "profiler/sample_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>

#include "common/statistics.hpp"

namespace shapescope::profiler {

namespace {

struct Moments {
  double mean = 0;
  double stddev = 0;      // sample standard deviation (n - 1)
  double rel_stderr = 0;  // stddev / sqrt(n) / mean; infinity below 2 samples or without a positive mean
};

Moments moments(std::span<const double> samples) {
  Moments m;
  const double n = double(samples.size());
  if (samples.empty()) return m;
  for (double x : samples) m.mean += x;
  m.mean /= n;
  m.rel_stderr = std::numeric_limits<double>::infinity();  // one sample says nothing about spread
  if (samples.size() < 2) return m;
  double squares = 0;
  for (double x : samples) squares += (x - m.mean) * (x - m.mean);
  m.stddev = std::sqrt(squares / (n - 1));
  if (m.mean > 0) m.rel_stderr = m.stddev / std::sqrt(n) / m.mean;
  return m;
}

// The 97.5% Student-t quantile, computed once per degrees of freedom (about 3 ms apiece, and a sweep's
// points mostly share a few sample counts).
double t_975(std::size_t dof) {
  static std::mutex mutex;
  static std::map<std::size_t, double> cache;
  const std::lock_guard lock(mutex);
  const auto [entry, inserted] = cache.try_emplace(dof, 0.0);
  if (inserted) entry->second = upper_student_quantile(0.025, double(dof));
  return entry->second;
}

// The lower rank k (1-based) of the median's 95% interval over n >= 6 samples: the largest k with
// P(Binomial(n, 1/2) <= k - 1) <= 0.025, summed in log space (2^-n underflows past n = 1074).
int median_interval_rank(std::size_t n) {
  static std::mutex mutex;
  static std::map<std::size_t, int> cache;
  const std::lock_guard lock(mutex);
  const auto [entry, inserted] = cache.try_emplace(n, 0);
  if (!inserted) return entry->second;
  const double log_half_n = double(n) * std::log(0.5);
  const double log_n_factorial = std::lgamma(double(n) + 1);
  double below = 0;  // P(B <= j)
  int k = 0;
  for (std::size_t j = 0; j < n; ++j) {
    below += std::exp(log_n_factorial - std::lgamma(double(j) + 1) - std::lgamma(double(n - j) + 1) + log_half_n);
    if (below > 0.025) break;
    k = int(j) + 1;
  }
  entry->second = k;
  return k;
}

double median_of_sorted(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

}  // namespace

SampleSummary summarize(std::span<const double> samples) {
  SampleSummary s;
  s.count = int(samples.size());
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = median_of_sorted(sorted);
  const Moments m = moments(samples);
  s.mean = m.mean;
  s.stddev = m.stddev;
  s.rel_stderr = m.rel_stderr;
  if (n >= 2) s.ci95 = t_975(n - 1) * m.stddev / std::sqrt(double(n));
  return s;
}

bool precise_enough(std::span<const double> samples, int min_samples, double target_rel_stderr) {
  if (int(samples.size()) < std::max(min_samples, 2)) return false;
  return moments(samples).rel_stderr <= target_rel_stderr;
}

double relative_median_ci95(std::span<const double> samples) {
  constexpr double kNone = std::numeric_limits<double>::infinity();
  const std::size_t n = samples.size();
  if (n < 6) return kNone;
  const std::size_t k = std::size_t(median_interval_rank(n));
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const double median = median_of_sorted(sorted);
  if (!(median > 0)) return kNone;
  return std::max(median - sorted[k - 1], sorted[n - k] - median) / median;
}

double relative_ci95(std::span<const double> samples) {
  const Moments m = moments(samples);
  if (!std::isfinite(m.rel_stderr)) return m.rel_stderr;
  return t_975(samples.size() - 1) * m.rel_stderr;
}

}  // namespace shapescope::profiler
