// Summary statistics of timing samples and the stopping rule.
#pragma once

#include <span>
#include <vector>

namespace shapescope::profiler {

struct SampleSummary {
  double mean = 0, median = 0, min = 0, max = 0, stddev = 0;
  double rel_stderr = 0;  // stddev / sqrt(n) / mean
  double ci95 = 0;        // Student-t half-width of the 95% interval of the mean
  int count = 0;
};

SampleSummary summarize(std::span<const double> samples);
// True once `samples` pins the mean down to `target_rel_stderr` (with at least `min_samples`).
// Cheap enough for every sample: it needs no quantile.
bool precise_enough(std::span<const double> samples, int min_samples, double target_rel_stderr);
// The Student-t 95% half-width of the mean over the mean; infinity below 2 samples or without a positive mean.
double relative_ci95(std::span<const double> samples);
// The distribution-free 95% interval of the median (order statistics: ranks k and n + 1 - k with
// P(Binomial(n, 1/2) < k) <= 2.5%), its wider half over the median: no assumption of normality, so one slow
// outlier widens it by one rank, not by its distance. Infinity below 6 samples (where no such interval
// exists) or without a positive median.
double relative_median_ci95(std::span<const double> samples);
// The samples' variance (n - 1) over their mean squared; NaN below 2 samples or without a positive mean.
double relative_variance(std::span<const double> samples);
// n Var(median of n) / Var(one sample) for normal samples: 1 up to n = 2 (the median is the mean), 1.3501 at
// 3, 1.1930 at 4, ..., rising to pi/2 (the median's asymptotic efficiency 2/pi); beyond n = 9, pi/2, which
// bounds it from above.
double median_variance_factor(int n);
// The 97.5% quantile of Student's t with `dof` >= 1 degrees of freedom (cached per dof).
double student_t_975(int dof);
// x with P(F > x) = `tail` for the variance ratio F(dof1, dof2) (dof >= 1, 0 < tail < 1): how far one sample
// variance may exceed another of the same spread by chance (cached per triple).
double upper_variance_ratio_quantile(double tail, int dof1, int dof2);

}  // namespace shapescope::profiler
