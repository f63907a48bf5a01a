#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "profiler/sample_stats.hpp"

namespace shapescope::profiler {
namespace {

TEST(SampleStats, SummaryOfKnownSamples) {
  const std::vector<double> samples = {4, 1, 3, 2};
  const SampleSummary s = summarize(samples);
  EXPECT_EQ(s.count, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  const double stddev = std::sqrt((2.25 + 0.25 + 0.25 + 2.25) / 3.0);  // sample (n-1) deviation
  EXPECT_DOUBLE_EQ(s.stddev, stddev);
  EXPECT_DOUBLE_EQ(s.rel_stderr, stddev / 2.0 / 2.5);
  EXPECT_NEAR(s.ci95 / (stddev / 2.0), 3.1824, 1e-4);  // Student t, 3 degrees of freedom
  EXPECT_DOUBLE_EQ(summarize(std::vector<double>{5, 1, 9}).median, 5);
}

TEST(SampleStats, MedianVarianceFactorMatchesMonteCarloOnNormalSamples) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> unit;
  for (const int n : {2, 3, 4, 5, 8, 9, 25}) {
    constexpr int kTrials = 200000;
    double squares = 0;
    std::vector<double> x(static_cast<std::size_t>(n));
    for (int trial = 0; trial < kTrials; ++trial) {
      for (double& v : x) v = unit(rng);
      const double median = summarize(x).median;
      squares += median * median;
    }
    const double factor = n * squares / kTrials;
    // Exact to Monte Carlo's 1.5% (3 standard errors of 200,000 trials) up to 9; an upper bound beyond.
    if (n <= 9) {
      EXPECT_NEAR(median_variance_factor(n) / factor, 1.0, 0.015) << n;
    } else {
      EXPECT_GE(median_variance_factor(n), factor) << n;
      EXPECT_LT(median_variance_factor(n), 1.05 * factor) << n;
    }
  }
}

TEST(SampleStats, StoppingRuleNeedsMinSamplesAndPrecision) {
  const std::vector<double> steady(5, 100.0);
  EXPECT_FALSE(precise_enough(std::span(steady).first(4), 5, 0.005));
  EXPECT_TRUE(precise_enough(steady, 5, 0.005));
  const std::vector<double> noisy = {100, 200, 100, 200, 100, 200};
  EXPECT_FALSE(precise_enough(noisy, 5, 0.005));
  EXPECT_TRUE(precise_enough(noisy, 5, 0.5));
  EXPECT_FALSE(precise_enough(std::vector<double>{100}, 1, 0.5));  // one sample has no spread estimate
}

}  // namespace
}  // namespace shapescope::profiler
