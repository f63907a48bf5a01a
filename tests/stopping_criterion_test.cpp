#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "common/user_error.hpp"
#include "profiler/measure.hpp"
#include "profiler/sample_stats.hpp"
#include "profiler/stopping_criterion.hpp"

namespace shapescope::profiler {
namespace {

// How many samples of `draw` the criterion takes before it is done (cap: 10,000).
template <typename Draw>
int samples_until_done(const MeasureOptions& options, Draw draw) {
  const auto criterion = make_stopping_criterion(options);
  for (int n = 1; n <= 10000; ++n) {
    criterion->add(draw());
    if (criterion->done()) return n;
  }
  return 10000;
}

TEST(StoppingCriterion, StderrIsTodaysRule) {
  MeasureOptions options;  // stderr, min 5, 0.5%
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(100.0, 5.0);
  std::vector<double> seen;
  const int taken = samples_until_done(options, [&] {
    seen.push_back(noise(rng));
    return seen.back();
  });
  // It stops at the first sample count where the old rule holds, not before.
  EXPECT_TRUE(precise_enough(seen, options.min_samples, options.target_rel_stderr));
  for (int n = 1; n < taken; ++n)
    EXPECT_FALSE(precise_enough(std::span(seen).first(std::size_t(n)), options.min_samples, options.target_rel_stderr));
  // 5% noise needs about (5 / 0.5)^2 = 100 samples.
  EXPECT_GT(taken, 50);
  EXPECT_LT(taken, 200);
  // A constant kernel stops at the minimum.
  EXPECT_EQ(samples_until_done(options, [] { return 10.0; }), 5);
}

TEST(StoppingCriterion, Ci95StopsEarlyOnAStableKernelAndHoldsANoisyOneToItsInterval) {
  MeasureOptions options;
  options.stopping_criterion = "ci95";
  EXPECT_EQ(samples_until_done(options, [] { return 10.0; }), 3);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(100.0, 5.0);
  std::vector<double> seen;
  const int taken = samples_until_done(options, [&] {
    seen.push_back(noise(rng));
    return seen.back();
  });
  EXPECT_LE(relative_ci95(seen), 0.01);
  EXPECT_GT(relative_ci95(std::span(seen).first(std::size_t(taken - 1))), 0.01);
  options.criterion_params["max-rel-ci95"] = 0.05;
  EXPECT_LT(samples_until_done(options, [&] { return noise(rng); }), taken);
}

TEST(StoppingCriterion, MedianIntervalCoversTheMedianAtLeast95PercentAndExistsFromSixSamples) {
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> skewed(1.0);  // true median ln 2
  const double true_median = std::log(2.0);
  for (const int n : {6, 7, 20, 101}) {
    int covered = 0;
    constexpr int kTrials = 4000;
    for (int trial = 0; trial < kTrials; ++trial) {
      std::vector<double> x(static_cast<std::size_t>(n));
      for (double& v : x) v = 1.0 + skewed(rng);  // shifted so the median is well away from 0
      const double half = relative_median_ci95(x);
      std::vector<double> sorted = x;
      std::sort(sorted.begin(), sorted.end());
      const double median = n % 2 ? sorted[std::size_t(n / 2)] : 0.5 * (sorted[std::size_t(n / 2 - 1)] + sorted[std::size_t(n / 2)]);
      if (std::abs(1.0 + true_median - median) <= half * median) ++covered;
    }
    // The interval is at least as wide as the order-statistic one, which holds >= 95% by construction.
    EXPECT_GE(covered, int(0.95 * kTrials) - 40) << n;  // 40: binomial noise of 4000 trials
  }
  EXPECT_TRUE(std::isinf(relative_median_ci95(std::vector<double>{1, 1, 1, 1, 1})));
  EXPECT_EQ(relative_median_ci95(std::vector<double>{2, 2, 2, 2, 2, 2}), 0.0);
  // n = 6: the interval is the whole range [min, max].
  EXPECT_NEAR(relative_median_ci95(std::vector<double>{10, 10, 10, 10, 10, 12}), 0.2, 1e-12);
}

TEST(StoppingCriterion, MedianCi95StopsWhereStderrDoesOnCleanSamplesAndEarlyWhenOutliersHoldTheMeanUp) {
  MeasureOptions stderr_options;
  stderr_options.stopping_criterion = "stderr";
  MeasureOptions median_options;
  median_options.stopping_criterion = "median-ci95";
  // Clean samples: the same count as stderr, to the sample.
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(100.0, 3.0);
  std::vector<double> clean(10000);
  for (double& v : clean) v = noise(rng);
  auto replay = [](const std::vector<double>& samples) {
    return [&samples, i = std::size_t(0)]() mutable { return samples[i++ % samples.size()]; };
  };
  EXPECT_EQ(samples_until_done(median_options, replay(clean)), samples_until_done(stderr_options, replay(clean)));
  EXPECT_EQ(samples_until_done(median_options, [] { return 10.0; }), 5);
  // 0.3% noise with one sample in eight three times as slow (another process, a clock dip): the mean's stderr
  // stays near 2-3% x sqrt(8/n) for hundreds of samples; the median's interval is narrow within a few dozen.
  std::vector<double> outliers(10000);
  std::normal_distribution<double> tight(100.0, 0.3);
  std::bernoulli_distribution slow(0.125);
  for (double& v : outliers) v = tight(rng) * (slow(rng) ? 3.0 : 1.0);
  const int by_stderr = samples_until_done(stderr_options, replay(outliers));
  const int by_median = samples_until_done(median_options, replay(outliers));
  EXPECT_GT(by_stderr, 500);
  EXPECT_LT(by_median, 60);
  median_options.criterion_params["max-rel-ci95"] = 0.0;  // refused: a bar must be positive
  EXPECT_THROW(make_stopping_criterion(median_options), UserError);
}

TEST(StoppingCriterion, RefusesUnknownNamesAndParameters) {
  MeasureOptions options;
  options.stopping_criterion = "entropy";
  EXPECT_THROW(make_stopping_criterion(options), UserError);
  options.stopping_criterion = "stderr";
  options.criterion_params["max-rel-ci95"] = 0.01;
  EXPECT_THROW(make_stopping_criterion(options), UserError);  // stderr takes none
  options.stopping_criterion = "ci95";
  options.criterion_params["max-rel-ci95"] = -1;
  EXPECT_THROW(make_stopping_criterion(options), UserError);
  std::map<std::string, double> params;
  parse_criterion_param("min-samples=4", params);
  EXPECT_EQ(params.at("min-samples"), 4);
  EXPECT_THROW(parse_criterion_param("min-samples", params), UserError);
  EXPECT_THROW(parse_criterion_param("min-samples=four", params), UserError);
}

}  // namespace
}  // namespace shapescope::profiler
