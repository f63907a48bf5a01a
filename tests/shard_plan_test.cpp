// Cutting a sweep into shards: every point in exactly one shard, the same cut on every call,
// shards balanced by predicted cost within the stated bound (total/N + the costliest point).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/model_catalog.hpp"
#include "profiler/m_sweep.hpp"
#include "profiler/shard_plan.hpp"

namespace shapescope::profiler {
namespace {

// DeepSeek-V3 TP8, every module, the cudagraph M list, three dtypes: a real sweep's points on an H200.
std::vector<SweepPoint> deepseek_points() {
  const ModelCatalog catalog = ModelCatalog::load_default();
  MSweepSpec spec;
  spec.preset = "cudagraph";
  const std::vector<int64_t> m_values = resolve_m_sweep(spec);
  std::vector<SweepPoint> points;
  for (const GemmProblem& problem : catalog.problems("deepseek_v3", "all", 8)) {
    for (const std::string dtype : {"fp8", "bf16", "a16w8"}) {
      const CostRates rates = cost_rates("NVIDIA H200", dtype);
      for (int64_t m : m_values)
        points.push_back({problem.module + "_" + dtype + ".csv", m, point_cost_seconds(problem, dtype, m, rates)});
    }
  }
  return points;
}

std::vector<double> loads(const std::vector<SweepPoint>& points, const std::vector<int>& shard_of, int shards) {
  std::vector<double> load(std::size_t(shards), 0.0);
  for (std::size_t i = 0; i < points.size(); ++i) load[std::size_t(shard_of[i])] += points[i].cost;
  return load;
}

TEST(ShardPlan, CostGrowsWithFlopsAndWithBytes) {
  const GemmProblem wide{"m", "wide", 1, 7168, 2048, 1, 0, 0, false};
  const CostRates h200 = cost_rates("NVIDIA H200", "fp8");
  EXPECT_GT(h200.peak_tflops, 1000);
  EXPECT_GT(h200.bandwidth_tb_per_s, 4);
  // Decode (bytes-bound: the weights) and prefill (FLOP-bound) both grow.
  EXPECT_LT(point_cost_seconds(wide, "fp8", 1, h200), point_cost_seconds(wide, "fp8", 8192, h200));
  GemmProblem wider = wide;
  wider.n *= 4;
  EXPECT_LT(point_cost_seconds(wide, "fp8", 1, h200), point_cost_seconds(wider, "fp8", 1, h200));
  EXPECT_LT(point_cost_seconds(wide, "fp8", 8192, h200), point_cost_seconds(wide, "bf16", 8192, cost_rates("NVIDIA H200", "bf16")));
  // A device outside the table (the CPU) still weighs both.
  const CostRates cpu = cost_rates("Intel Xeon", "bf16");
  EXPECT_GT(cpu.peak_tflops, 0);
  EXPECT_LT(point_cost_seconds(wide, "bf16", 16, cpu), point_cost_seconds(wide, "bf16", 256, cpu));
}

TEST(ShardPlan, EveryPointInExactlyOneShardAndTheSameCutEveryTime) {
  const std::vector<SweepPoint> points = deepseek_points();
  for (int shards : {1, 2, 3, 8, 16}) {
    const std::vector<int> first = assign_shards(points, shards);
    EXPECT_EQ(first, assign_shards(points, shards));
    std::set<std::pair<std::string, int64_t>> seen;
    std::size_t total = 0;
    for (int index = 0; index < shards; ++index) {
      for (const auto& [file, m_values] : shard_m_values(points, shards, index)) {
        EXPECT_TRUE(std::is_sorted(m_values.begin(), m_values.end()));
        for (int64_t m : m_values) {
          EXPECT_TRUE(seen.insert({file, m}).second) << file << " M=" << m << " in two shards";
          ++total;
        }
      }
    }
    EXPECT_EQ(total, points.size()) << shards << " shards";
    for (int shard : first) EXPECT_TRUE(shard >= 0 && shard < shards);
  }
}

TEST(ShardPlan, ShardsAreBalancedByCostNotByCount) {
  const std::vector<SweepPoint> points = deepseek_points();
  double costliest = 0, total = 0;
  for (const SweepPoint& point : points) costliest = std::max(costliest, point.cost), total += point.cost;
  for (int shards : {2, 4, 8, 16}) {
    const std::vector<double> load = loads(points, assign_shards(points, shards), shards);
    const double most = *std::max_element(load.begin(), load.end());
    EXPECT_LE(most, total / shards + costliest) << shards;  // the stated bound
    EXPECT_LE(most / (total / shards), 1.02) << shards;     // and, on a real sweep, within 2% of the mean
  }
  // Costs far apart: counts come out unequal, loads equal.
  std::vector<SweepPoint> skewed;
  for (int m = 1; m <= 6; ++m) skewed.push_back({"small.csv", m, 1.0});
  skewed.push_back({"large.csv", 1, 6.0});
  const std::vector<int> shard_of = assign_shards(skewed, 2);
  EXPECT_EQ(loads(skewed, shard_of, 2), (std::vector<double>{6.0, 6.0}));
  EXPECT_EQ(std::count(shard_of.begin(), shard_of.end(), shard_of.back()), 1);
}

TEST(ShardPlan, MoreShardsThanPointsLeavesSomeEmpty) {
  const std::vector<SweepPoint> points = {{"a.csv", 1, 1.0}, {"a.csv", 2, 1.0}};
  EXPECT_TRUE(shard_m_values(points, 4, 3).empty());
  EXPECT_THROW(assign_shards(points, 0), std::invalid_argument);
}

}  // namespace
}  // namespace shapescope::profiler
