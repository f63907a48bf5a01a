// The pooled-ci95 criterion on simulated sweeps (seeded): how many samples it takes against stderr's, and
// whether the medians it records stay as close to the true medians as its target says.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "profiler/measure.hpp"
#include "profiler/noise_history.hpp"
#include "profiler/sample_stats.hpp"
#include "profiler/stopping_criterion.hpp"

namespace shapescope::profiler {
namespace {

constexpr double kTarget = 0.01;  // pooled-ci95's default max-rel-ci95: the median's 95% half-width

// A simulated kernel: one timing sample of sweep point `point`, its true median and mean.
struct SimulatedKernel {
  std::function<double(int point, std::mt19937_64& rng)> sample;
  std::function<double(int point)> true_median;
  std::function<double(int point)> true_mean;
};

struct SweepOutcome {
  int samples = 0;
  int points = 0;
  int floor_stops = 0;                // points stopped at 3 samples or fewer
  int mean_covered = 0;               // |mean - true mean| within the recorded ci95
  std::vector<double> median_errors;  // |recorded median - true median| / true median
  std::vector<int> point_samples;     // per point, sweep after sweep
  // The share of points whose recorded median lies within `bound` of the true median.
  double share_within(double bound) const {
    return double(std::count_if(median_errors.begin(), median_errors.end(), [&](double e) { return e <= bound; })) /
           double(median_errors.size());
  }
};

// Sweeps `points` points of `kernel` `sweeps` times the way measure() does: one criterion per point, the
// sweep's NoiseHistory handed to it, the point's samples added to the history when it ends (cap 2,000).
SweepOutcome simulate(const std::string& criterion_name, const SimulatedKernel& kernel, int points, int sweeps,
                      uint64_t seed) {
  MeasureOptions options;
  options.stopping_criterion = criterion_name;
  SweepOutcome outcome;
  std::mt19937_64 rng(seed);
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    NoiseHistory history;
    for (int point = 0; point < points; ++point) {
      const auto criterion = make_stopping_criterion(options, &history);
      std::vector<double> samples;
      while (int(samples.size()) < 2000) {
        samples.push_back(kernel.sample(point, rng));
        criterion->add(samples.back());
        if (criterion->done()) break;
      }
      history.add(samples, criterion->joins_pool());
      const SampleSummary summary = summarize(samples);
      const double ci95 = criterion->recorded_relative_ci95() ? *criterion->recorded_relative_ci95() * summary.mean
                                                              : summary.ci95;
      outcome.samples += summary.count;
      outcome.point_samples.push_back(summary.count);
      ++outcome.points;
      outcome.floor_stops += summary.count <= 3;
      outcome.mean_covered += std::abs(summary.mean - kernel.true_mean(point)) <= ci95;
      outcome.median_errors.push_back(std::abs(summary.median - kernel.true_median(point)) / kernel.true_median(point));
    }
  }
  return outcome;
}

// 95% less three binomial standard deviations over `points`: a share of points a 95% interval covers, within
// the noise of the simulation.
double at_95(int points) { return 0.95 - 3 * std::sqrt(0.95 * 0.05 / points); }

double time_of(int point) { return 20.0 + 0.5 * point; }  // µs, growing with M as a GEMM's does

SimulatedKernel normal_kernel(std::function<double(int)> rel_sigma) {
  return {[rel_sigma](int point, std::mt19937_64& rng) {
            return time_of(point) * (1 + rel_sigma(point) * std::normal_distribution<double>()(rng));
          },
          time_of, time_of};
}

// Four runs in five at the fast mode, one at a mode 3% slower, each with 0.3% jitter (a clock or a cache that
// now and then lands the other way).
constexpr double kFastShare = 0.8, kSlowMode = 1.03, kJitter = 0.003;
double bimodal_cdf(double x) {
  const auto normal_cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  return kFastShare * normal_cdf((x - 1) / kJitter) + (1 - kFastShare) * normal_cdf((x - kSlowMode) / (kSlowMode * kJitter));
}
double bimodal_median() {
  double low = 0.9, high = 1.1;
  for (int i = 0; i < 100; ++i) (bimodal_cdf(0.5 * (low + high)) < 0.5 ? low : high) = 0.5 * (low + high);
  return 0.5 * (low + high);
}
SimulatedKernel bimodal_kernel() {
  return {[](int point, std::mt19937_64& rng) {
            const double mode = std::bernoulli_distribution(kFastShare)(rng) ? 1.0 : kSlowMode;
            return time_of(point) * mode * (1 + kJitter * std::normal_distribution<double>()(rng));
          },
          [](int point) { return time_of(point) * bimodal_median(); },
          [](int point) { return time_of(point) * (kFastShare + (1 - kFastShare) * kSlowMode); }};
}

TEST(PooledCi95, VarianceRatioQuantileMatchesTables) {
  EXPECT_NEAR(upper_variance_ratio_quantile(0.05, 1, 1), 161.45, 0.01);
  EXPECT_NEAR(upper_variance_ratio_quantile(0.05, 1, 8), 5.3177, 1e-3);
  EXPECT_NEAR(upper_variance_ratio_quantile(0.05, 2, 30), 3.3158, 1e-3);
  EXPECT_NEAR(upper_variance_ratio_quantile(0.05, 4, 60), 2.5252, 1e-3);
  EXPECT_NEAR(upper_variance_ratio_quantile(0.01, 2, 20), 5.8489, 1e-3);
  EXPECT_NEAR(student_t_975(30), 2.0423, 1e-4);
}

TEST(PooledCi95, NoiseHistoryPoolsTheLastPointsByDegreesOfFreedomLeavingRefusedOnesOut) {
  NoiseHistory history;
  history.add(std::vector<double>{5.0});  // one sample: no spread, skipped
  EXPECT_EQ(history.points(), 0);
  history.add(std::vector<double>{99, 101});        // variance 2 / 100^2, 1 dof
  history.add(std::vector<double>{198, 200, 202});  // variance 4 / 200^2 = 1e-4, 2 dof
  const PooledNoise both = history.pooled(16);
  EXPECT_EQ(both.dof, 3);
  EXPECT_NEAR(both.relative_variance, (1 * 2e-4 + 2 * 1e-4) / 3, 1e-12);
  const PooledNoise last = history.pooled(1);
  EXPECT_EQ(last.dof, 2);
  EXPECT_NEAR(last.relative_variance, 1e-4, 1e-12);
  // A refused point stays out: the window reaches past it, within twice its length.
  history.add(std::vector<double>{90, 110}, false);
  EXPECT_EQ(history.pooled(1).dof, 2);
  EXPECT_NEAR(history.pooled(1).relative_variance, 1e-4, 1e-12);
  history.add(std::vector<double>{90, 110}, false);
  EXPECT_EQ(history.pooled(1).dof, 0);  // two refused in a row: no pool of 1
  EXPECT_EQ(history.pooled(2).dof, 3);
}

TEST(PooledCi95, FirstPointsOfASweepGoByTheStderrRule) {
  MeasureOptions options;
  options.stopping_criterion = "pooled-ci95";
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(100.0, 0.5);
  NoiseHistory history;
  // An empty pool, then one point of 4 dof (under min-pool-dof 8): the per-point floor of 5 holds.
  for (int point = 0; point < 2; ++point) {
    const auto criterion = make_stopping_criterion(options, &history);
    std::vector<double> samples;
    do {
      samples.push_back(noise(rng));
      criterion->add(samples.back());
    } while (!criterion->done());
    EXPECT_EQ(samples.size(), 5u) << point;
    EXPECT_FALSE(criterion->recorded_relative_ci95());
    history.add(samples);
  }
  // Two points (8 dof) make a pool: the third stops at the criterion's floor of 3 and records the pool's
  // interval of the mean.
  const auto criterion = make_stopping_criterion(options, &history);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(criterion->done());
    criterion->add(noise(rng));
  }
  EXPECT_TRUE(criterion->done());
  ASSERT_TRUE(criterion->recorded_relative_ci95());
  EXPECT_NEAR(*criterion->recorded_relative_ci95(),
              student_t_975(8) * std::sqrt(history.pooled(8).relative_variance / 3), 1e-12);
  // Without a history (a lone measurement: the peak, the timing floors) it is stderr's rule.
  EXPECT_EQ(make_stopping_criterion(options)->done(), false);
}

TEST(PooledCi95, StableKernelTakesAThirdFewerSamplesAndItsMediansStayWithinTheTarget) {
  // 0.5% noise, the H100's typical event-timed spread on the main job's shape (2026-11-25).
  const SimulatedKernel stable = normal_kernel([](int) { return 0.005; });
  const SweepOutcome by_stderr = simulate("stderr", stable, 128, 10, 11);
  const SweepOutcome pooled = simulate("pooled-ci95", stable, 128, 10, 11);
  std::printf("0.5%% noise, 1,280 points: pooled-ci95 %d samples, stderr %d\n", pooled.samples, by_stderr.samples);
  EXPECT_LE(pooled.samples, 0.7 * by_stderr.samples);
  EXPECT_GT(pooled.floor_stops, pooled.points * 8 / 10);
  // The recorded medians: 95% within the target, and the recorded interval of the mean covers its truth 95%.
  EXPECT_GE(pooled.share_within(kTarget), at_95(pooled.points));
  EXPECT_GE(pooled.mean_covered, at_95(pooled.points) * pooled.points);
}

TEST(PooledCi95, NoisyKernelTakesNoMoreSamplesThanStderrWithMediansAsClose) {
  // 3% noise: the pool is too wide to reach the bar before stderr's rule holds, so points go by that rule: as
  // many samples as stderr, medians within 1.5x the bar (stderr binds the mean; the median spreads sqrt(pi/2)
  // times wider), and the points' own intervals cover the true mean.
  const SimulatedKernel noisy = normal_kernel([](int) { return 0.03; });
  const SweepOutcome by_stderr = simulate("stderr", noisy, 64, 5, 12);
  const SweepOutcome pooled = simulate("pooled-ci95", noisy, 64, 5, 12);
  EXPECT_GT(pooled.samples, 20 * pooled.points);
  EXPECT_LE(pooled.samples, by_stderr.samples * 21 / 20);  // a different stream, hence a little slack
  EXPECT_GE(pooled.share_within(1.5 * kTarget), at_95(pooled.points));
  EXPECT_GE(pooled.mean_covered, at_95(pooled.points) * pooled.points);
  EXPECT_GE(by_stderr.share_within(1.5 * kTarget), at_95(by_stderr.points));
}

TEST(PooledCi95, NeverTakesMoreSamplesThanStderrOnTheSameSamples) {
  // Pools and points of every spread from 0.1% to 5%, some with slow samples: fed the same samples, pooled-ci95
  // stops no later than stderr at every point, and well before it where a quiet pool vouches for the point.
  MeasureOptions stderr_options, pooled_options;
  stderr_options.stopping_criterion = "stderr";
  pooled_options.stopping_criterion = "pooled-ci95";
  std::mt19937_64 rng(17);
  std::normal_distribution<double> unit;
  const auto log_uniform_spread = [&rng] {
    return std::exp(std::uniform_real_distribution<double>(std::log(0.001), std::log(0.05))(rng));
  };
  int trials = 0, later = 0, earlier = 0;
  for (int trial = 0; trial < 1000; ++trial, ++trials) {
    NoiseHistory history;
    const int history_points = std::uniform_int_distribution<int>(0, 12)(rng);
    const double history_spread = log_uniform_spread();
    for (int point = 0; point < history_points; ++point) {
      std::vector<double> samples(std::size_t(std::uniform_int_distribution<int>(3, 20)(rng)));
      for (double& sample : samples) sample = 50 * (1 + history_spread * unit(rng));
      history.add(samples);
    }
    const double spread = log_uniform_spread();
    const double slow_share = std::uniform_real_distribution<double>(0, 0.1)(rng);
    std::vector<double> stream(2000);
    for (double& sample : stream)
      sample = 50 * (std::bernoulli_distribution(slow_share)(rng) ? 3.0 : 1.0) * (1 + spread * unit(rng));
    const auto samples_to_stop = [&](const MeasureOptions& options) {
      const auto criterion = make_stopping_criterion(options, &history);
      for (std::size_t i = 0; i < stream.size(); ++i) {
        criterion->add(stream[i]);
        if (criterion->done()) return int(i) + 1;
      }
      return int(stream.size());
    };
    const int by_stderr = samples_to_stop(stderr_options), pooled = samples_to_stop(pooled_options);
    later += pooled > by_stderr;
    earlier += pooled < by_stderr;
  }
  EXPECT_EQ(later, 0);
  EXPECT_GT(earlier, trials / 5);
}

TEST(PooledCi95, BimodalKernelIsHeldToTheTarget) {
  const SimulatedKernel bimodal = bimodal_kernel();
  const SweepOutcome by_stderr = simulate("stderr", bimodal, 128, 5, 13);
  const SweepOutcome pooled = simulate("pooled-ci95", bimodal, 128, 5, 13);
  EXPECT_GE(pooled.share_within(kTarget), at_95(pooled.points));
  // The pool learns the main mode's spread (most points see only it); a point with a sample in the other mode
  // fails the guard and goes by its own samples, so its median is held all the same.
  EXPECT_LE(pooled.samples, by_stderr.samples * 3 / 2);
}

TEST(PooledCi95, DriftingNoiseIsFollowedByTheWindow) {
  // The spread climbs from 0.3% to 2% across the sweep: the pool of the last points follows it. Where the
  // spread is under 0.75% the pool saves samples against stderr and its medians stay within the bar (1%);
  // beyond it the pool cannot reach the bar before stderr's rule (0.5% stderr of the mean) holds, so the noisy
  // end costs what stderr's does, its medians within 1.5x the bar, as stderr's are.
  const auto rel_sigma = [](int point) { return 0.003 + 0.017 * point / 127.0; };
  const SimulatedKernel drifting = normal_kernel(rel_sigma);
  const SweepOutcome pooled = simulate("pooled-ci95", drifting, 128, 10, 14);
  const SweepOutcome by_stderr = simulate("stderr", drifting, 128, 10, 14);
  int quiet_pooled = 0, quiet_stderr = 0, noisy_pooled = 0, noisy_stderr = 0;
  SweepOutcome quiet, noisy, noisy_by_stderr;
  for (int i = 0; i < pooled.points; ++i) {
    const bool is_quiet = rel_sigma(i % 128) < 0.0075;
    (is_quiet ? quiet_pooled : noisy_pooled) += pooled.point_samples[std::size_t(i)];
    (is_quiet ? quiet_stderr : noisy_stderr) += by_stderr.point_samples[std::size_t(i)];
    (is_quiet ? quiet : noisy).median_errors.push_back(pooled.median_errors[std::size_t(i)]);
    if (!is_quiet) noisy_by_stderr.median_errors.push_back(by_stderr.median_errors[std::size_t(i)]);
  }
  std::printf("drifting noise: below 0.75%% pooled-ci95 %d samples, stderr %d; above %d and %d\n", quiet_pooled,
              quiet_stderr, noisy_pooled, noisy_stderr);
  EXPECT_LT(quiet_pooled, quiet_stderr * 3 / 4);
  EXPECT_LE(noisy_pooled, noisy_stderr * 21 / 20);
  EXPECT_GE(quiet.share_within(kTarget), at_95(int(quiet.median_errors.size())));
  EXPECT_GE(noisy.share_within(1.5 * kTarget), at_95(int(noisy.median_errors.size())));
  EXPECT_GE(noisy_by_stderr.share_within(1.5 * kTarget), at_95(int(noisy_by_stderr.median_errors.size())));
}

TEST(PooledCi95, SlowSamplesThatWidenThePoolHoldNoPointUp) {
  // 0.5% noise, one sample in 40 three times as slow (a clock dip, another process), and the sweep's first two
  // points (the pool's seeds) with one sample in six five times as slow: their variance would ask hundreds of
  // samples of every neighbour; the median's own interval stops those at a few dozen, the outliers' weight in
  // the pool is capped, and the next points' spikes stay out of it.
  const SimulatedKernel spiky{[](int point, std::mt19937_64& rng) {
                                const double slow = point < 2 ? (std::bernoulli_distribution(1.0 / 6)(rng) ? 5.0 : 1.0)
                                                              : (std::bernoulli_distribution(1.0 / 40)(rng) ? 3.0 : 1.0);
                                return time_of(point) * slow * (1 + 0.005 * std::normal_distribution<double>()(rng));
                              },
                              time_of, time_of};
  const SweepOutcome pooled = simulate("pooled-ci95", spiky, 128, 5, 16);
  const SweepOutcome by_median = simulate("median-ci95", spiky, 128, 5, 16);
  const SweepOutcome by_stderr = simulate("stderr", spiky, 128, 5, 16);
  std::printf("slow samples, 640 points: pooled-ci95 %d samples, median-ci95 %d, stderr %d\n", pooled.samples,
              by_median.samples, by_stderr.samples);
  EXPECT_LT(pooled.samples, by_median.samples);
  EXPECT_LT(pooled.samples, by_stderr.samples);
  EXPECT_GE(pooled.share_within(kTarget), at_95(pooled.points));
}

TEST(PooledCi95, GuardSendsAPointNoisierThanThePoolToItsOwnSamples) {
  // Fifteen quiet points (0.3%), then one ten times noisier (3%): the pool says 3 samples are plenty, the
  // point's own variance says otherwise, and it goes on by stderr's rule.
  MeasureOptions options;
  options.stopping_criterion = "pooled-ci95";
  std::mt19937_64 rng(15);
  std::normal_distribution<double> unit;
  int trials = 0, noisy_at_floor = 0, quiet_at_floor = 0;
  std::vector<double> noisy_errors;
  for (int trial = 0; trial < 400; ++trial, ++trials) {
    NoiseHistory history;
    for (int point = 0; point < 15; ++point) {
      std::vector<double> samples;
      for (int i = 0; i < 5; ++i) samples.push_back(100 * (1 + 0.003 * unit(rng)));
      history.add(samples);
    }
    for (const double sigma : {0.03, 0.003}) {
      const auto criterion = make_stopping_criterion(options, &history);
      std::vector<double> samples;
      do {
        samples.push_back(100 * (1 + sigma * unit(rng)));
        criterion->add(samples.back());
      } while (!criterion->done() && samples.size() < 2000);
      if (sigma > 0.01) {
        noisy_at_floor += samples.size() <= 3;
        noisy_errors.push_back(std::abs(summarize(samples).median - 100) / 100);
      } else {
        quiet_at_floor += samples.size() <= 3;
      }
    }
  }
  // For a point ten times noisier, the chance a 2-dof variance falls under 3.3x the pool's is 1 - exp(-0.033)
  // = 3%: the guard lets few through; the quiet point passes it 95% of the time.
  EXPECT_LT(noisy_at_floor, trials / 10);
  EXPECT_GT(quiet_at_floor, trials * 9 / 10);
  SweepOutcome noisy;
  noisy.median_errors = noisy_errors;
  EXPECT_GE(noisy.share_within(1.5 * kTarget), at_95(trials));  // stderr's rule, as for the noisy kernel
}

}  // namespace
}  // namespace shapescope::profiler
