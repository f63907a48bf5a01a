#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/m_search_grid.hpp"
#include "profiler/adaptive_search.hpp"
#include "common/user_error.hpp"
#include "profiler/m_search.hpp"

namespace shapescope::profiler {
namespace {

std::vector<int64_t> step_grid(int64_t first, int64_t last, int64_t step) {
  std::vector<int64_t> grid;
  for (int64_t m = first; m <= last; m += step) grid.push_back(m);
  return grid;
}

// A tiled kernel: one tile row of `tile` M costs `tile_us`; MFU follows flops / time.
SearchPoint tiled(int64_t m, int64_t tile, double tile_us) {
  SearchPoint point;
  point.measured = true;
  point.time_us = tile_us * double((m + tile - 1) / tile);
  point.utils = double(m) / point.time_us / 100.0;
  point.kernel_name = "tiled";
  return point;
}

std::set<int64_t> as_set(const std::vector<int64_t>& ms) { return {ms.begin(), ms.end()}; }

TEST(AdaptiveSearch, FindsEveryTileBoundaryToTheGridsResolution) {
  AdaptiveOptions options;
  options.grid = step_grid(1, 2048, 1);
  const AdaptiveResult result = adaptive_search(options, [](int64_t m) { return tiled(m, 96, 10.0); });
  const std::set<int64_t> measured = as_set(result.measured);
  // Each step up of the time: the last M of a tile row and the first of the next, both measured.
  for (int64_t boundary = 96; boundary < 2048; boundary += 96) {
    EXPECT_TRUE(measured.count(boundary)) << boundary;
    EXPECT_TRUE(measured.count(boundary + 1)) << boundary + 1;
  }
  EXPECT_LT(measured.size(), options.grid.size() / 2);
}

TEST(AdaptiveSearch, FindsWhereTheLaunchedKernelChanges) {
  // The library switches kernels at M = 3004: where the new kernel is 10% slower, the switch is found to the grid's
  // resolution; where MFU carries on or rises, to within low_stride grid steps.
  for (const double slowdown : {1.1, 1.0, 0.9}) {
    AdaptiveOptions options;
    options.grid = step_grid(16, 8192, 4);
    const AdaptiveResult result = adaptive_search(options, [&](int64_t m) {
      const double time = (10.0 + double(m) / 100) * (m < 3004 ? 1.0 : slowdown);
      return SearchPoint{true, time, double(m) / time, m < 3004 ? "a" : "b", 0};
    });
    const std::set<int64_t> measured = as_set(result.measured);
    const int64_t last_a = *std::prev(measured.lower_bound(3004)), first_b = *measured.lower_bound(3004);
    EXPECT_LE(first_b - last_a, slowdown > 1 ? 4 : 4 * options.low_stride) << slowdown;
  }
}

TEST(AdaptiveSearch, MeasuresOnlyTheCoarsePassWhereNothingChanges) {
  AdaptiveOptions options;
  options.grid = step_grid(16, 32768, 4);
  const AdaptiveResult result = adaptive_search(options, [](int64_t m) {
    return SearchPoint{true, 5.0 + double(m) / 50, double(m) / (5.0 + double(m) / 50), "linear", 0};
  });
  EXPECT_EQ(int64_t(result.measured.size()), result.coarse_points);
  EXPECT_LT(result.measured.size(), options.grid.size() / 10);
  EXPECT_FALSE(result.budget_spent);
}

TEST(AdaptiveSearch, CoversALowStretchWithinItsStride) {
  // MFU 40% lower from M=1200 to M=1600 (a slower kernel under the same name): every M of the stretch
  // lies within low_stride grid steps of a measured one, and both its edges are found exactly.
  AdaptiveOptions options;
  options.grid = step_grid(16, 4096, 4);
  const AdaptiveResult result = adaptive_search(options, [](int64_t m) {
    const double slowdown = m >= 1200 && m <= 1600 ? 1 / 0.6 : 1.0;
    const double time = (10.0 + double(m) / 100) * slowdown;
    return SearchPoint{true, time, double(m) / time, "k", 0};
  });
  const std::set<int64_t> measured = as_set(result.measured);
  EXPECT_TRUE(measured.count(1196) && measured.count(1200));
  EXPECT_TRUE(measured.count(1600) && measured.count(1604));
  int64_t previous = 1200;
  for (int64_t m : measured) {
    if (m <= 1200 || m > 1600) continue;
    EXPECT_LE(m - previous, 4 * options.low_stride) << m;
    previous = m;
  }
}

TEST(AdaptiveSearch, MeasuresTheLevelBeforeALowStretchAndEveryOtherMWhereItRisesToTheBar) {
  // MFU 40% lower from M = 1200, recovering linearly to the sweep's own by M = 1800: the stretch crosses the bar
  // (0.86 of the level) gradually, where the analysis's bar may fall on either side of the search's.
  AdaptiveOptions options;
  options.grid = step_grid(16, 4096, 4);
  const auto mfu_factor = [](int64_t m) {
    if (m < 1200 || m >= 1800) return 1.0;
    return 0.6 + 0.4 * double(m - 1200) / 600;
  };
  const auto utils = [&](int64_t m) { return double(m) / (10.0 + double(m) / 100) * mfu_factor(m); };
  const AdaptiveResult result = adaptive_search(options, [&](int64_t m) {
    return SearchPoint{true, double(m) / utils(m), utils(m), "k", 0};
  });
  const std::set<int64_t> measured = as_set(result.measured);
  // The level window before the edge: at least five measured M within level_window grid steps of it.
  std::size_t before = 0;
  for (int64_t m = 1196 - 4 * options.level_window; m <= 1196; m += 4) before += measured.count(m);
  EXPECT_GE(before, 5u);
  // Where the stretch lies within 3% below the search's bar (0.86 of the level, the MFU just before the stretch):
  // measured M at most two grid steps apart.
  const double bar = options.drop_ratio * utils(1196);
  std::size_t in_band = 0;
  int64_t previous = 0;
  for (int64_t m : measured) {
    if (m >= 1200 && m < 1800 && utils(m) >= bar * (1 - options.min_tolerance) && utils(m) < bar) {
      ++in_band;
      EXPECT_LE(m - previous, 8) << m;
    }
    previous = m;
  }
  EXPECT_GT(in_band, 3u);
}

TEST(AdaptiveSearch, FollowsALowStretchHiddenBetweenMOfAnAlternatingKernel) {
  // The library runs another kernel at every M divisible by 8; from M = 2000 to 2400 that kernel is 40% slower. The
  // slow M alternate with fast ones, so every one of them must be measured to be flagged.
  AdaptiveOptions options;
  options.grid = step_grid(16, 8192, 4);
  const auto slow = [](int64_t m) { return m % 8 == 0 && m >= 2000 && m < 2400; };
  const AdaptiveResult result = adaptive_search(options, [&](int64_t m) {
    const double time = (10.0 + double(m) / 100) / (slow(m) ? 0.6 : 1.0);
    return SearchPoint{true, time, double(m) / time, m % 8 == 0 ? "aligned" : "unaligned", 0};
  });
  const std::set<int64_t> measured = as_set(result.measured);
  for (int64_t m = 2000; m < 2400; m += 8) EXPECT_TRUE(measured.count(m)) << m;
  EXPECT_LT(measured.size(), options.grid.size() / 6);
}

TEST(AdaptiveSearch, MeasuresThePartsOfTheSplitPlansOfALowStretch) {
  // Past M = 512 the library runs a kernel 40% slower until M = 1024: at M = 580, 512 + 68 measured apart is 11% faster
  // than 580 at once (and no M past the stretch is faster than 580 below M = 800). Every low M the search measured has a plan of measured parts (or a faster measured M past it)
  // that beats split_ratio of its time, so that the analysis can confirm the plans the exhaustive sweep's finds.
  AdaptiveOptions options;
  options.grid = step_grid(4, 4096, 4);
  const auto time_of = [](int64_t m) { return (2.0 + double(m) / 64) * (m > 512 && m <= 1024 ? 1.4 : 1.0); };
  const AdaptiveResult result = adaptive_search(options, [&](int64_t m) {
    return SearchPoint{true, time_of(m), double(m) / time_of(m), "k", 0};
  });
  const std::set<int64_t> measured = as_set(result.measured);
  std::size_t low = 0;
  for (int64_t m : measured) {
    if (m <= 512 || m > 1024) continue;
    ++low;
    const double bar = options.split_ratio * time_of(m);
    bool planned = std::any_of(measured.upper_bound(m), measured.end(), [&](int64_t later) { return time_of(later) < bar; });
    for (int64_t part : measured)
      planned = planned || (part < m && measured.count(m - part) && time_of(part) + time_of(m - part) < bar);
    EXPECT_TRUE(planned) << m;
  }
  EXPECT_GT(low, 40u);
  EXPECT_LT(measured.size(), options.grid.size() / 4);
}

TEST(AdaptiveSearch, StopsAtItsBudget) {
  AdaptiveOptions options;
  options.grid = step_grid(1, 2048, 1);
  options.max_points = 100;
  const AdaptiveResult capped = adaptive_search(options, [](int64_t m) { return tiled(m, 96, 10.0); });
  EXPECT_EQ(capped.measured.size(), 100u);
  EXPECT_TRUE(capped.budget_spent);

  options.max_points = 0;
  int asked = 0;
  options.out_of_time = [&] { return asked >= 40; };
  const AdaptiveResult timed = adaptive_search(options, [&](int64_t m) {
    ++asked;
    return tiled(m, 96, 10.0);
  });
  EXPECT_EQ(timed.measured.size(), 40u);
  EXPECT_TRUE(timed.budget_spent);
}

TEST(AdaptiveSearch, StopsWhenTheCallerStopsIt) {
  AdaptiveOptions options;
  options.grid = step_grid(1, 2048, 1);
  int asked = 0;
  const AdaptiveResult result = adaptive_search(
      options,
      [&](int64_t m) {
        ++asked;
        return tiled(m, 96, 10.0);
      },
      [&] { return asked >= 7; });
  EXPECT_EQ(result.measured.size(), 7u);
  EXPECT_FALSE(result.budget_spent);
}

TEST(AdaptiveSearch, RefinesAroundAPointThatIsNotMeasured) {
  AdaptiveOptions options;
  options.grid = step_grid(1, 1000, 1);
  const AdaptiveResult result = adaptive_search(options, [](int64_t m) {
    SearchPoint point{true, 10.0 + double(m), double(m) / (10.0 + double(m)), "k", 0};
    if (m >= 501) point.measured = false;  // e.g. out of memory from here on
    return point;
  });
  const std::set<int64_t> measured = as_set(result.measured);
  EXPECT_TRUE(measured.count(500) && measured.count(501));
}

// The first measured M, then two M that did not run (a replayed profile's error rows), then a fall: the interval
// from the grid's first M holds nothing left to ask, and the search must end rather than look for it forever.
TEST(AdaptiveSearch, EndsWhenAnIntervalFromTheFirstMHoldsOnlyMThatDidNotRun) {
  AdaptiveOptions options;
  options.grid = step_grid(1, 10, 1);
  std::vector<int64_t> asked;
  const AdaptiveResult result = adaptive_search(options, [&](int64_t m) {
    asked.push_back(m);
    return SearchPoint{m != 2 && m != 3, 10.0, m >= 4 ? 0.5 : 1.0, "k", 0};
  });
  EXPECT_EQ(result.measured, asked);
  EXPECT_TRUE(as_set(asked).count(2) && as_set(asked).count(3) && as_set(asked).count(4));
}

// Powers of two up to a grid's end at int64's: the coarse pass stops doubling before it overflows.
TEST(AdaptiveSearch, AGridEndingAtInt64sEndIsSearched) {
  AdaptiveOptions options;
  options.grid = {1, 2, int64_t(1) << 62, (int64_t(1) << 62) + 1, INT64_MAX};
  const AdaptiveResult result =
      adaptive_search(options, [](int64_t) { return SearchPoint{true, 1.0, 1.0, "k", 0}; });
  const std::set<int64_t> measured = as_set(result.measured);
  EXPECT_TRUE(measured.count(1) && measured.count(2) && measured.count(int64_t(1) << 62) && measured.count(INT64_MAX));
}

TEST(AdaptiveSearch, PredictedBoundariesJoinTheCoarsePass) {
  AdaptiveOptions options;
  options.grid = step_grid(16, 4096, 4);
  options.boundaries = {{1000, 0.5}, {2050, 0.25}};
  std::vector<int64_t> asked;
  adaptive_search(options, [&](int64_t m) {
    asked.push_back(m);
    return SearchPoint{true, double(m), 1.0, "k", 0};
  });
  const std::set<int64_t> measured = as_set(asked);
  EXPECT_TRUE(measured.count(1000) && measured.count(1004));               // on the grid: it and the M after it
  EXPECT_TRUE(measured.count(2048) && measured.count(2052));               // off the grid: both sides
}

TEST(AdaptiveSearch, ACoarsePassOfDenseBoundariesKeepsTheLargestWithinItsShare) {
  // A boundary every 16 M (many tile columns: one tile row per wave), the effect of wave w being 1/w.
  AdaptiveOptions options;
  options.grid = step_grid(16, 32768, 4);
  for (int64_t wave = 1; wave * 16 <= 32768; ++wave) options.boundaries.push_back({wave * 16, 1.0 / double(wave)});
  const AdaptiveResult result = adaptive_search(options, [](int64_t m) {
    return SearchPoint{true, 5.0 + double(m) / 50, double(m) / (5.0 + double(m) / 50), "linear", 0};
  });
  // The grid's share of boundaries (two M each), the stride's points and the powers of two; not 2,048 boundaries.
  const auto kept = std::size_t(options.boundary_share * double(options.grid.size()));
  EXPECT_LE(std::size_t(result.coarse_points),
            2 * kept + options.grid.size() / std::size_t(coarse_stride_for(options.grid.size())) + 2 * 16 + 2);
  EXPECT_LT(result.coarse_points, int64_t(options.grid.size() / 12));
  const std::set<int64_t> measured = as_set(result.measured);
  // The largest effects (the first waves) are measured, none so small that the refinement would take it for noise.
  EXPECT_TRUE(measured.count(16) && measured.count(48) && measured.count(96) && measured.count(100));
  for (int64_t wave = int64_t(1 / options.min_tolerance) + 1; wave * 16 <= 32768; ++wave) {
    const int64_t m = wave * 16;
    const bool on_stride = (m - 16) / 4 % coarse_stride_for(options.grid.size()) == 0;
    const bool power_of_two = (m & (m - 1)) == 0;
    if (!on_stride && !power_of_two) {
      EXPECT_FALSE(measured.count(m) && measured.count(m + 4)) << m;
    }
  }
}

// Three neighbouring grid M measured: a noise probe.
std::size_t probes(const AdaptiveResult& result, const std::vector<int64_t>& grid) {
  const std::set<int64_t> measured = as_set(result.measured);
  std::size_t count = 0;
  for (std::size_t i = 1; i + 1 < grid.size(); ++i)
    count += measured.count(grid[i - 1]) && measured.count(grid[i]) && measured.count(grid[i + 1]);
  return count;
}

TEST(AdaptiveSearch, ProbesTheNoiseOnlyWhereTheMeasurementsDoNotStateIt) {
  AdaptiveOptions options;
  options.grid = step_grid(16, 32768, 4);
  const auto flat = [](double rel_noise) {
    return [rel_noise](int64_t m) { return SearchPoint{true, double(m) / 50.0, 0.5, "flat", rel_noise}; };
  };
  const AdaptiveResult unstated = adaptive_search(options, flat(0));
  const AdaptiveResult stated = adaptive_search(options, flat(0.01));
  EXPECT_GT(probes(unstated, options.grid), 5u);
  EXPECT_EQ(probes(stated, options.grid), 0u);
  EXPECT_LT(stated.measured.size(), unstated.measured.size());
}

TEST(AdaptiveSearch, CoarseStrideIsAPrimeOfAtLeastEleven) {
  EXPECT_EQ(coarse_stride_for(100), 11);
  EXPECT_EQ(coarse_stride_for(8192), 23);
  EXPECT_EQ(coarse_stride_for(40985), 103);
}

TEST(MSearch, SidecarGridRunsGiveTheGridBack) {
  std::vector<int64_t> grid = step_grid(1, 14, 1);
  for (int64_t m : step_grid(16, 32768, 4)) grid.push_back(m);
  grid.push_back(40000);
  const nlohmann::json group = m_search_json({grid, AdaptiveResult{{1, 16}, 2, false}});
  EXPECT_EQ(group["mode"], "adaptive");
  EXPECT_EQ(group["grid"].size(), 3u);
  EXPECT_EQ(group["grid_points"], grid.size());
  EXPECT_EQ(group["measured_points"], 2);
  EXPECT_EQ(grid_from_runs(group["grid"]), grid);
}

TEST(MSearch, ParsesItsModesAndRefusesBudgetsOfAGrid) {
  EXPECT_EQ(parse_m_search("adaptive"), MSearch::adaptive);
  EXPECT_EQ(parse_m_search("grid"), MSearch::grid);
  EXPECT_THROW(parse_m_search("dense"), UserError);
  MSearchOptions options;
  options.max_points = 100;
  EXPECT_THROW(check_m_search_options(options), UserError);
  options.mode = MSearch::adaptive;
  EXPECT_NO_THROW(check_m_search_options(options));
  options.time_budget_s = -1;
  EXPECT_THROW(check_m_search_options(options), UserError);
}

}  // namespace
}  // namespace shapescope::profiler
