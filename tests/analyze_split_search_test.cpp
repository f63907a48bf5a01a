#include "analyze/split_search.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "analyze/anomaly.hpp"
#include "analyze_test_support.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {
namespace {

using testing::make_series;

// The study's pair restated with two pointers over the sorted earlier batches:
// the smallest summed time of two different batches adding up to M, the
// smallest m1 among equal sums, kept when below time * ratio.
std::optional<std::pair<int64_t, double>> restated_study_pair(const Series& series, std::size_t index, double ratio) {
  const int64_t m = series.points[index].m;
  std::size_t low = 0, high = index == 0 ? 0 : index - 1;
  double best = std::numeric_limits<double>::infinity();
  int64_t best_m1 = 0;
  while (index > 1 && low < high) {
    const int64_t sum = series.points[low].m + series.points[high].m;
    if (sum == m) {
      const double time = series.points[low].time_us + series.points[high].time_us;
      if (time < best) {
        best = time;
        best_m1 = series.points[low].m;
      }
      ++low;
      --high;
    } else if (sum < m) {
      ++low;
    } else {
      --high;
    }
  }
  if (!(best < series.points[index].time_us * ratio)) return std::nullopt;
  return std::pair{best_m1, best};
}

TEST(SplitSearch, StudyPairMatchesATwoPointerRestatementOnEveryStudyProfile) {
  for (const std::string& name : testing::study_profiles()) {
    const std::vector<Series> series = read_series_file(testing::fairyspeed(name).string(), {});
    const std::vector<Anomaly> anomalies = find_anomalies(series[0], AnomalyRule::study, {0.85});
    const SplitSearch search(series[0], {}, series[0].points.back().m);
    std::size_t found = 0;
    for (const Anomaly& anomaly : anomalies) {
      const auto expected = restated_study_pair(series[0], anomaly.index, 0.9);
      const auto plan = search.study_pair(anomaly.index);
      ASSERT_EQ(plan.has_value(), expected.has_value()) << name << " M=" << anomaly.m;
      if (!plan) continue;
      ++found;
      EXPECT_EQ(plan->parts, (std::vector<int64_t>{expected->first, anomaly.m - expected->first}));
      EXPECT_EQ(plan->predicted_us, expected->second);
    }
    EXPECT_GT(found, 0u) << name;
  }
}

// Every multiset of 2..max_parts measured sizes that adds up to M, by recursion.
double brute_force_k_way(const Series& series, int64_t m, int max_parts, double overhead) {
  double best = std::numeric_limits<double>::infinity();
  const std::function<void(std::size_t, int64_t, int, double)> extend = [&](std::size_t from, int64_t left, int used,
                                                                              double time) {
    if (left == 0 && used >= 2) best = std::min(best, time + overhead * (used - 1));
    if (used == max_parts) return;
    for (std::size_t i = from; i < series.points.size() && series.points[i].m <= left; ++i) {
      extend(i, left - series.points[i].m, used + 1, time + series.points[i].time_us);
    }
  };
  extend(0, m, 0, 0.0);
  return best;
}

Series random_series(std::mt19937& random, int64_t largest_m) {
  std::uniform_real_distribution<double> noise(0.0, 1.0);
  std::vector<std::pair<int64_t, double>> points;
  for (int64_t m = 1; m <= largest_m; ++m) {
    if (m > 3 && noise(random) < 0.3) continue;  // holes: not every M is measured
    const double spike = noise(random) < 0.2 ? 3.0 : 1.0;
    points.emplace_back(m, (5 + 0.5 * static_cast<double>(m)) * spike * (0.8 + 0.4 * noise(random)));
  }
  return make_series(points);
}

TEST(SplitSearch, KWayIsTheOptimumOfABruteForceSearch) {
  std::mt19937 random(20261122);
  for (const int max_parts : {2, 3, 4, 5, 6}) {
    for (const double overhead : {0.0, 2.5}) {
      const Series series = random_series(random, 48);
      SplitOptions options;
      options.max_parts = max_parts;
      options.launch_overhead_us = overhead;
      options.split_ratio = 1e9;  // report every decomposition, to compare the optimum itself
      const SplitSearch search(series, options, series.points.back().m);
      for (std::size_t i = 0; i < series.points.size(); ++i) {
        const int64_t m = series.points[i].m;
        const double expected = brute_force_k_way(series, m, max_parts, overhead);
        const auto plan = search.k_way(i);
        ASSERT_EQ(plan.has_value(), std::isfinite(expected)) << "M=" << m << " parts " << max_parts;
        if (!plan) continue;
        EXPECT_NEAR(plan->predicted_us, expected, 1e-9 * expected) << "M=" << m << " parts " << max_parts;
        // The plan is what it says: measured sizes adding up to M, priced as stated.
        int64_t total = 0;
        double priced = overhead * static_cast<double>(plan->parts.size() - 1);
        for (const int64_t part : plan->parts) {
          total += part;
          const auto it = std::find_if(series.points.begin(), series.points.end(),
                                       [&](const SeriesPoint& point) { return point.m == part; });
          ASSERT_NE(it, series.points.end()) << "part " << part << " was not measured";
          priced += it->time_us;
        }
        EXPECT_EQ(total, m);
        EXPECT_LE(plan->parts.size(), static_cast<std::size_t>(max_parts));
        EXPECT_NEAR(plan->predicted_us, priced, 1e-9 * priced);
      }
    }
  }
}

TEST(SplitSearch, HalvesFindsTheEqualSplitTheStudyPairCannot) {
  // M=64 is slow; 32 is fast; no other pair of measured sizes adds up to 64.
  const Series series = make_series({{8, 10}, {32, 20}, {64, 100}});
  const SplitSearch search(series, {}, 64);
  EXPECT_FALSE(search.study_pair(2).has_value());
  const auto halves = search.halves(2);
  ASSERT_TRUE(halves.has_value());
  EXPECT_EQ(halves->parts, (std::vector<int64_t>{32, 32}));
  EXPECT_DOUBLE_EQ(halves->predicted_us, 40);
  EXPECT_DOUBLE_EQ(halves->gain, 0.6);
  EXPECT_EQ(search.plans_for(2).best(0.9)->kind, PlanKind::halves);
}

TEST(SplitSearch, PadUpTakesTheFastestLargerMAndTheSmallestAmongEquals) {
  const Series series = make_series({{8, 100}, {16, 50}, {24, 60}, {32, 40}, {40, 40}, {48, 90}});
  const SplitSearch search(series, {}, 48);
  const auto plan = search.pad_up(0);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->parts, (std::vector<int64_t>{32}));
  EXPECT_DOUBLE_EQ(plan->predicted_us, 40);
  EXPECT_FALSE(search.pad_up(3).has_value());  // 40 is not below 40 * 0.9
  EXPECT_FALSE(search.pad_up(5).has_value());  // nothing larger was measured
}

TEST(SplitSearch, PlansMustBeatTheSplitRatioStrictly) {
  // 4 + 4 = 8 costs exactly 0.9 of M=8's time: not reported, as in the study.
  const Series series = make_series({{4, 45}, {8, 100}});
  const SplitSearch search(series, {}, 8);
  EXPECT_FALSE(search.halves(1).has_value());
  EXPECT_FALSE(search.k_way(1).has_value());
}

TEST(SplitSearch, LaunchOverheadIsChargedPerExtraLaunch) {
  const Series series = make_series({{1, 10}, {2, 10}, {3, 100}});
  SplitOptions options;
  options.launch_overhead_us = 3;
  const SplitSearch search(series, options, 3);
  const auto plan = search.k_way(2);
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->parts, (std::vector<int64_t>{1, 2}));
  EXPECT_DOUBLE_EQ(plan->predicted_us, 23);
  // The study pair keeps the study's test on the bare sum; its prediction carries the overhead.
  EXPECT_DOUBLE_EQ(search.study_pair(2)->predicted_us, 23);
}

TEST(SplitSearch, BestPrefersFewerLaunchesThenTheStudysPlanOnTies) {
  PlanSet plans;
  plans.time_us = 100;
  plans.k_way = SplitPlan{PlanKind::k_way, {10, 20}, 50, 0.5};
  plans.study_pair = SplitPlan{PlanKind::study_pair, {10, 20}, 50, 0.5};
  plans.pad_up = SplitPlan{PlanKind::pad_up, {40}, 50, 0.5};
  EXPECT_EQ(plans.best(0.9)->kind, PlanKind::pad_up);
  plans.pad_up.reset();
  EXPECT_EQ(plans.best(0.9)->kind, PlanKind::study_pair);
  EXPECT_FALSE(plans.best(0.4).has_value());
}

TEST(SplitSearch, RejectsTablesBeyondItsLimitAndNoParts) {
  const Series series = make_series({{1, 1}, {2, 2}});
  EXPECT_THROW(SplitSearch(series, {}, int64_t{1} << 40), UserError);
  SplitOptions options;
  options.max_parts = 0;
  EXPECT_THROW(SplitSearch(series, options, 2), UserError);
}

}  // namespace
}  // namespace shapescope::analyze
