#include "profiler/sample_stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace shapescope::profiler {

double student_t_975(int dof) {
  // Exact table for small samples, where the t distribution is far from normal.
  static constexpr std::array<double, 30> kTable = {
      12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
      2.2010,  2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
      2.0796,  2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423};
  if (dof < 1) return std::numeric_limits<double>::infinity();
  if (dof <= int(kTable.size())) return kTable[size_t(dof - 1)];
  // Cornish-Fisher expansion around the normal quantile: < 1e-4 off beyond 30 dof.
  const double z = 1.959963984540054, v = double(dof);
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * v) + (5 * z5 + 16 * z3 + 3 * z) / (96 * v * v) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * v * v * v);
}

SampleSummary summarize(std::span<const double> samples) {
  SampleSummary s;
  s.count = int(samples.size());
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double sum = 0;
  for (double x : sorted) sum += x;
  s.mean = sum / double(n);
  if (n < 2) {
    s.rel_stderr = std::numeric_limits<double>::infinity();  // one sample says nothing about spread
    return s;
  }
  double squares = 0;
  for (double x : sorted) squares += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(squares / double(n - 1));
  const double stderr_mean = s.stddev / std::sqrt(double(n));
  s.rel_stderr = s.mean > 0 ? stderr_mean / s.mean : std::numeric_limits<double>::infinity();
  s.ci95 = student_t_975(int(n) - 1) * stderr_mean;
  return s;
}

bool precise_enough(std::span<const double> samples, int min_samples, double target_rel_stderr) {
  if (int(samples.size()) < std::max(min_samples, 2)) return false;
  return summarize(samples).rel_stderr <= target_rel_stderr;
}

}  // namespace shapescope::profiler
