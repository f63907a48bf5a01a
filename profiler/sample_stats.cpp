#include "profiler/sample_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <numbers>
#include <tuple>

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

// The regularized incomplete beta function I_x(a, b) by its continued fraction (modified Lentz), on the side of
// x where it converges fast.
double incomplete_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  if (x > (a + 1) / (a + b + 2)) return 1 - incomplete_beta(1 - x, b, a);
  constexpr double kTiny = 1e-300;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < kTiny ? kTiny : d);
  double fraction = d;
  for (int m = 1; m <= 300; ++m) {
    for (const double numerator : {m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                                   -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))}) {
      d = 1 + numerator * d;
      d = 1 / (std::abs(d) < kTiny ? kTiny : d);
      c = 1 + numerator / c;
      if (std::abs(c) < kTiny) c = kTiny;
      fraction *= c * d;
    }
    if (std::abs(c * d - 1) < 1e-15) break;
  }
  return front * fraction / a;
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

double relative_variance(std::span<const double> samples) {
  const Moments m = moments(samples);
  if (samples.size() < 2 || !(m.mean > 0)) return std::numeric_limits<double>::quiet_NaN();
  return m.stddev * m.stddev / (m.mean * m.mean);
}

double median_variance_factor(int n) {
  // Exact values for small n (order statistics of the normal; Monte Carlo agrees to 0.5%, sample_stats_test).
  static constexpr double kSmall[] = {1, 1, 1, 1.3501, 1.1930, 1.4362, 1.2868, 1.4760, 1.3391, 1.4990};
  if (n < int(std::size(kSmall))) return kSmall[std::max(n, 0)];
  return std::numbers::pi / 2;
}

double student_t_975(int dof) { return t_975(std::size_t(std::max(dof, 1))); }

double upper_variance_ratio_quantile(double tail, int dof1, int dof2) {
  static std::mutex mutex;
  static std::map<std::tuple<double, int, int>, double> cache;
  const std::lock_guard lock(mutex);
  const auto [entry, inserted] = cache.try_emplace({tail, dof1, dof2}, 0.0);
  if (!inserted) return entry->second;
  const double a = 0.5 * dof2, b = 0.5 * dof1;
  // P(F > x) = I_{dof2 / (dof2 + dof1 x)}(dof2 / 2, dof1 / 2), decreasing in x: bisection on log x.
  double low = std::log(1e-8), high = std::log(1e8);
  for (int step = 0; step < 100; ++step) {
    const double middle = 0.5 * (low + high);
    const double upper_tail = incomplete_beta(dof2 / (dof2 + dof1 * std::exp(middle)), a, b);
    (upper_tail > tail ? low : high) = middle;
  }
  entry->second = std::exp(0.5 * (low + high));
  return entry->second;
}

double relative_ci95(std::span<const double> samples) {
  const Moments m = moments(samples);
  if (!std::isfinite(m.rel_stderr)) return m.rel_stderr;
  return t_975(samples.size() - 1) * m.rel_stderr;
}

}  // namespace shapescope::profiler
