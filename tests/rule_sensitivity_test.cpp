#include "analyze/rule_sensitivity.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "analyze/synthetic_sweep.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {
namespace {

std::vector<CliffRequest> one_of_each(double depth) {
  return {{CliffKind::single_batch, depth}, {CliffKind::multi_batch, depth}, {CliffKind::kernel_switch, depth}};
}

TEST(SyntheticSweep, SeedDecidesTheSweep) {
  SweepSpec spec;
  spec.cliffs = one_of_each(0.3);
  spec.seed = 11;
  const SyntheticSweep a = synthetic_sweep(spec), b = synthetic_sweep(spec);
  ASSERT_EQ(a.series.points.size(), spec.batches);
  for (std::size_t i = 0; i < spec.batches; ++i) EXPECT_EQ(a.series.points[i].utils, b.series.points[i].utils);
  spec.seed = 12;
  const SyntheticSweep c = synthetic_sweep(spec);
  std::size_t same = 0;
  for (std::size_t i = 0; i < spec.batches; ++i) same += a.series.points[i].utils == c.series.points[i].utils;
  EXPECT_LT(same, 10u);
}

TEST(SyntheticSweep, CliffsChangeOnlyTheirBatchesByTheirDepth) {
  SweepSpec spec;
  spec.seed = 5;
  const SyntheticSweep clean = synthetic_sweep(spec);
  spec.cliffs = one_of_each(0.4);
  spec.cliffs.push_back({CliffKind::single_batch, 0.2});
  const SyntheticSweep sweep = synthetic_sweep(spec);
  ASSERT_EQ(sweep.cliffs.size(), 4u);
  std::vector<bool> touched(spec.batches, false);
  for (std::size_t c = 0; c < sweep.cliffs.size(); ++c) {
    const InjectedCliff& cliff = sweep.cliffs[c];
    if (c > 0) {
      EXPECT_GE(cliff.first_touched, sweep.cliffs[c - 1].last_touched + 1 + kCliffGap);
    }
    EXPECT_GE(cliff.first_touched, kFirstCliffBatch);
    for (std::size_t i = cliff.first_touched; i <= cliff.last_touched; ++i) touched[i] = true;
    const auto ratio = [&](std::size_t i) { return sweep.series.points[i].utils / clean.series.points[i].utils; };
    for (std::size_t i = cliff.first; i < cliff.first + cliff.count; ++i) EXPECT_NEAR(ratio(i), 1 - cliff.depth, 1e-12);
    if (cliff.kind == CliffKind::single_batch) {
      EXPECT_EQ(cliff.count, 1u);
      for (const std::size_t i : {cliff.first - 3, cliff.first - 1, cliff.first + 1, cliff.first + 3}) {
        EXPECT_GE(ratio(i), 1 - 0.4 * cliff.depth - 1e-12);
        EXPECT_LE(ratio(i), 1 - 0.1 * cliff.depth + 1e-12);
      }
    } else {
      EXPECT_EQ(cliff.first, cliff.first_touched + 1);
      EXPECT_EQ(cliff.last_touched, cliff.first + cliff.count);
    }
    const bool switched = sweep.series.points[cliff.first].kernel_name != clean.series.points[cliff.first].kernel_name;
    EXPECT_EQ(switched, cliff.kind == CliffKind::kernel_switch) << to_string(cliff.kind);
  }
  for (std::size_t i = 0; i < spec.batches; ++i) {
    if (!touched[i]) {
      EXPECT_EQ(sweep.series.points[i].utils, clean.series.points[i].utils) << i;
    }
  }
}

TEST(SyntheticSweep, ScatterIsTheNinetyFivePercentBand) {
  // Noise relative to the noise-free twin (scatter 0, same seed), in the middle of the
  // sweep where its loudness is the nominal one.
  SweepSpec spec;
  spec.batches = 50000;
  spec.outlier_rate = 0;
  spec.seed = 3;
  spec.scatter = 0;
  const SyntheticSweep level = synthetic_sweep(spec);
  spec.scatter = 0.1;
  const SyntheticSweep noisy = synthetic_sweep(spec);
  std::size_t inside = 0, counted = 0;
  for (std::size_t i = spec.batches * 45 / 100; i < spec.batches * 55 / 100; ++i) {
    inside += std::abs(noisy.series.points[i].utils / level.series.points[i].utils - 1) <= 0.1;
    ++counted;
  }
  EXPECT_NEAR(static_cast<double>(inside) / static_cast<double>(counted), 0.95, 0.015);
}

TEST(SyntheticSweep, RefusesCliffsThatDoNotFit) {
  SweepSpec spec;
  spec.batches = 200;
  spec.cliffs = one_of_each(0.3);
  EXPECT_THROW(synthetic_sweep(spec), UserError);
}

TEST(SensitivityTally, FoundAndFalseAlarmsFollowTheDefinitions) {
  SweepSpec spec;
  spec.seed = 9;
  spec.cliffs = {{CliffKind::single_batch, 0.3}, {CliffKind::multi_batch, 0.3}, {CliffKind::kernel_switch, 0.5}};
  const SyntheticSweep sweep = synthetic_sweep(spec);
  const auto m_at = [&](std::size_t i) { return sweep.series.points[i].m; };
  const auto cliff_of = [&](CliffKind kind) {
    return *std::find_if(sweep.cliffs.begin(), sweep.cliffs.end(), [&](const auto& c) { return c.kind == kind; });
  };
  const InjectedCliff single = cliff_of(CliffKind::single_batch);
  const InjectedCliff multi = cliff_of(CliffKind::multi_batch);
  const InjectedCliff step = cliff_of(CliffKind::kernel_switch);

  SensitivityTally tally;
  // A shoulder of the single-batch cliff (no hit, no false alarm), the batch before the
  // multi-batch cliff (a hit), the kernel switch's third batch (too late: no hit), and
  // one batch far from every cliff (a false alarm).
  std::size_t far = 10;
  tally.add(sweep, {m_at(single.first + 1), m_at(multi.first - 1), m_at(step.first + 2), m_at(far)});
  EXPECT_EQ((tally.detection[{CliffKind::single_batch, 0.3}].found), 0u);
  EXPECT_EQ((tally.detection[{CliffKind::multi_batch, 0.3}].found), 1u);
  EXPECT_EQ((tally.detection[{CliffKind::kernel_switch, 0.5}].found), 0u);
  EXPECT_EQ(tally.false_alarms, 1u);
  std::size_t touched = 0;
  for (const InjectedCliff& cliff : sweep.cliffs) touched += cliff.last_touched - cliff.first_touched + 1;
  EXPECT_EQ(tally.untouched_batches, spec.batches - touched);
  EXPECT_NEAR(tally.false_alarms_per_1000(), 1000.0 / static_cast<double>(spec.batches - touched), 1e-12);

  tally.add(sweep, {m_at(single.first), m_at(step.first + 1)});
  EXPECT_EQ((tally.detection[{CliffKind::single_batch, 0.3}].injected), 2u);
  EXPECT_DOUBLE_EQ((tally.detection[{CliffKind::single_batch, 0.3}].rate()), 0.5);
  EXPECT_DOUBLE_EQ((tally.detection[{CliffKind::kernel_switch, 0.5}].rate()), 0.5);
}

}  // namespace
}  // namespace shapescope::analyze
