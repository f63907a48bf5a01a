#include <gtest/gtest.h>

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
