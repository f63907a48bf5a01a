#include "analyze/regions.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "analyze/analysis.hpp"
#include "analyze/explain.hpp"
#include "analyze/readers.hpp"
#include "analyze/synthetic_sweep.hpp"
#include "analyze/unmeasured_m.hpp"
#include "analyze_test_support.hpp"
#include "scratch_dir.hpp"
#include "triage_test_support.hpp"

namespace shapescope::analyze {
namespace {

using testing::dip_profile;

// Quiet sweeps (±1% scatter, no outliers, no drift) whose only anomalies are the injected cliffs.
SweepSpec quiet_spec(std::vector<CliffRequest> cliffs, uint64_t seed) {
  SweepSpec spec;
  spec.batches = 1500;
  spec.scatter = 0.01;
  spec.outlier_rate = 0;
  spec.drift = 0;
  spec.cliffs = std::move(cliffs);
  spec.seed = seed;
  return spec;
}

std::vector<Region> regions_of(const SeriesAnalysis& analysis, std::vector<const Series*> others = {}) {
  RegionInputs inputs;
  inputs.other_kernels = std::move(others);
  return find_regions(analysis, inputs);
}

std::vector<Region> in_m_order(std::vector<Region> regions) {
  std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) { return a.first_m < b.first_m; });
  return regions;
}

TEST(Regions, OneRegionPerInjectedCliffCoveringIt) {
  const std::vector<CliffRequest> cliffs = {{CliffKind::single_batch, 0.4},
                                            {CliffKind::multi_batch, 0.3},
                                            {CliffKind::kernel_switch, 0.3},
                                            {CliffKind::multi_batch, 0.4},
                                            {CliffKind::kernel_switch, 0.25}};
  for (const uint64_t seed : {1u, 2u, 3u}) {
    const SyntheticSweep sweep = synthetic_sweep(quiet_spec(cliffs, seed));
    const SeriesAnalysis analysis = analyze_series(sweep.series, {}, MWeights());
    const std::vector<Region> regions = in_m_order(regions_of(analysis));
    ASSERT_EQ(regions.size(), sweep.cliffs.size()) << "seed " << seed;
    for (std::size_t c = 0; c < sweep.cliffs.size(); ++c) {
      const InjectedCliff& cliff = sweep.cliffs[c];
      const Region& region = regions[c];
      const auto& points = sweep.series.points;
      // The region lies within what the cliff touched and holds its first full-depth M.
      EXPECT_GE(region.first_m, points[cliff.first_touched].m) << "seed " << seed << " cliff " << c;
      EXPECT_LE(region.last_m, points[cliff.last_touched].m) << "seed " << seed << " cliff " << c;
      EXPECT_LE(region.first_m, points[cliff.first].m + 4) << "seed " << seed << " cliff " << c;
      EXPECT_NEAR(region.worst_drop, cliff.depth, 0.1) << "seed " << seed << " cliff " << c;
      if (cliff.kind == CliffKind::kernel_switch) {
        ASSERT_TRUE(region.cause) << describe_cause(region);
        EXPECT_EQ(region.cause->kind, CauseKind::kernel_switch);
        EXPECT_NE(region.cause->evidence.find(fmt::format("gemm_slow_{}", c)), std::string::npos)
            << region.cause->evidence;
        EXPECT_EQ(region.supported_findings.size(), region.findings.size());
      } else if (region.cause) {
        // Only the sweep's harmless kernel renaming can be claimed, and only where it happened
        // within the cliff: the arithmetic of a claim must hold where the drop is.
        EXPECT_EQ(region.cause->kind, CauseKind::kernel_switch) << describe_cause(region);
        bool renamed = false;
        for (std::size_t i = cliff.first_touched; i <= cliff.last_touched; ++i)
          renamed |= points[i].kernel_name != points[cliff.first_touched - 1].kernel_name;
        EXPECT_TRUE(renamed) << describe_cause(region);
      } else {
        // Nothing else in a synthetic sweep's columns explains a plain dip: the region says so.
        EXPECT_EQ(region.unexplained.rfind("no supported cause", 0), 0u) << region.unexplained;
      }
    }
  }
}

TEST(Regions, SortedByTimeLostAndAnotherKernelIsTheRemedy) {
  const SyntheticSweep sweep =
      synthetic_sweep(quiet_spec({{CliffKind::kernel_switch, 0.3}, {CliffKind::multi_batch, 0.15}}, 5));
  // The same sweep without cliffs (the noise of a seed does not depend on them), as another kernel.
  SyntheticSweep clean = synthetic_sweep(quiet_spec({}, 5));
  clean.series.kernel = "steady_kernel";
  const SeriesAnalysis analysis = analyze_series(sweep.series, {}, MWeights());
  const std::vector<Region> regions = regions_of(analysis, {&sweep.series, &clean.series});
  ASSERT_FALSE(regions.empty());
  for (std::size_t i = 1; i < regions.size(); ++i) EXPECT_GE(regions[i - 1].lost_us, regions[i].lost_us);
  const auto kernel_switch = std::find_if(regions.begin(), regions.end(), [](const Region& region) {
    return region.cause && region.cause->kind == CauseKind::kernel_switch;
  });
  ASSERT_NE(kernel_switch, regions.end());
  ASSERT_TRUE(kernel_switch->remedy);
  EXPECT_EQ(kernel_switch->remedy->kind, RemedyKind::another_kernel);
  EXPECT_NE(kernel_switch->remedy->description.find("steady_kernel"), std::string::npos);
  // The clean kernel runs ~30% faster where the other dropped 30% (MFU × 0.7: time / 0.7).
  EXPECT_NEAR(kernel_switch->remedy->gain, 0.3, 0.05);
}

// An 8-SM device, N = 128 and 16x64 tiles: 2 tile columns, so every 64 rows of M fill one
// wave of 8 tiles; 10 µs per wave. M = 16, 32, …, 256.
Series wave_series() {
  Series series;
  series.name = "waves";
  series.n = 128;
  series.k = 4096;
  series.multiprocessors = 8;
  series.peak_tflops = 1;
  for (int64_t m = 16; m <= 256; m += 16) {
    SeriesPoint point;
    point.m = m;
    point.kernel_name = "gemm_16x64_kernel";
    point.time_us = 10.0 * static_cast<double>((m / 16 * 2 + 7) / 8);
    point.utils = static_cast<double>(m) / point.time_us / 100;
    series.points.push_back(point);
  }
  return series;
}

TEST(Regions, WaveSpillsAreOneRegionEachWithTheirArithmetic) {
  AnalysisOptions options;
  options.rule = AnomalyRule::study;  // against the best smaller M: 64, one full wave
  const Series series = wave_series();
  const SeriesAnalysis analysis = analyze_series(series, options, MWeights());
  const std::vector<Region> regions = in_m_order(regions_of(analysis));
  // Past 64 rows a second wave starts 5/8 full (M 80: −37.5%, M 96: −25%); past 128 a third
  // (M 144, 160), past 192 a fourth (M 208); fuller spills stay above 0.85 of the best.
  ASSERT_EQ(regions.size(), 3u);
  const std::pair<int64_t, int64_t> ranges[] = {{80, 96}, {144, 160}, {208, 208}};
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const Region& region = regions[i];
    EXPECT_EQ(region.first_m, ranges[i].first);
    EXPECT_EQ(region.last_m, ranges[i].second);
    ASSERT_TRUE(region.cause) << describe_cause(region);
    EXPECT_EQ(region.cause->kind, CauseKind::wave_quantization);
    EXPECT_EQ(region.supported_findings.size(), region.findings.size()) << describe_cause(region);
    EXPECT_NE(region.cause->evidence.find("tiles on 8 SMs"), std::string::npos) << region.cause->evidence;
  }
  EXPECT_EQ(describe_range(regions[0]), "M 80–96 (2 anomalies among 2 measured M)");
  EXPECT_NEAR(regions[0].worst_drop, 0.375, 1e-9);
  EXPECT_NEAR(regions[0].median_drop, 0.3125, 1e-9);
}

TEST(Regions, AKernelSwitchNextToAWaveSpillIsItsOwnRegionAndPadsUp) {
  Series series = wave_series();
  // M 112 and 128 run a kernel twice as slow; M 144 takes 30 µs, less than either.
  for (SeriesPoint& point : series.points) {
    if (point.m == 112 || point.m == 128) {
      point.time_us *= 2;
      point.utils /= 2;
      point.kernel_name = "gemm_16x64_slow_kernel";
    }
  }
  AnalysisOptions options;
  options.rule = AnomalyRule::study;
  const SeriesAnalysis analysis = analyze_series(series, options, MWeights());
  const std::vector<Region> regions = in_m_order(regions_of(analysis));
  ASSERT_GE(regions.size(), 2u);
  EXPECT_EQ(regions[0].last_m, 96);
  const Region& slow = regions[1];
  EXPECT_EQ(slow.first_m, 112);
  EXPECT_EQ(slow.last_m, 128);
  ASSERT_TRUE(slow.cause);
  EXPECT_EQ(slow.cause->kind, CauseKind::kernel_switch);
  ASSERT_TRUE(slow.remedy) << describe_remedy(slow);
  EXPECT_EQ(slow.remedy->kind, RemedyKind::pad_up);
  EXPECT_NE(slow.remedy->description.find("up to 144"), std::string::npos) << slow.remedy->description;
  EXPECT_NEAR(slow.remedy->gain, 1 - 60.0 / 80.0, 1e-9);
}

// Every anomaly with a cause of its own (noise aside) lies in a region whose cause holds for it: grouping
// explains members against their run's reference, and one that reference leaves without a cause keeps its own.
void expect_grouping_keeps_every_cause(const Series& series) {
  const SeriesAnalysis analysis = analyze_series(series, {}, MWeights());
  std::set<std::size_t> supported;
  for (const Region& region : regions_of(analysis))
    supported.insert(region.supported_findings.begin(), region.supported_findings.end());
  for (std::size_t f = 0; f < analysis.findings.size(); ++f) {
    const Explanation alone = explain_anomaly(series, analysis.findings[f].anomaly);
    const bool has_cause = std::any_of(alone.causes.begin(), alone.causes.end(),
                                       [](const Cause& cause) { return cause.kind != CauseKind::noise; });
    if (has_cause) {
      EXPECT_TRUE(supported.count(f)) << series.name << " M=" << alone.m << ": " << alone.summary();
    }
  }
}

TEST(Regions, GroupingKeepsEveryCauseAMemberHasAlone) {
  for (const char* file : {triage_testing::kRtx4090Torch251, triage_testing::kRtx4090Torch230})
    for (const Series& series : read_series_file(triage_testing::data_file(file).string(), {}))
      expect_grouping_keeps_every_cause(series);
  for (const uint64_t seed : {1u, 2u, 3u})
    expect_grouping_keeps_every_cause(
        synthetic_sweep(quiet_spec({{CliffKind::kernel_switch, 0.3}, {CliffKind::multi_batch, 0.2}}, seed)).series);
}

// The dip profile held at its 700 W limit 5% of each point's time, M = 1200 and 1220 held there 70% of theirs
// (or, without the column, nothing said of it).
std::string capped_profile(bool with_power_cap) {
  if (!with_power_cap) return dip_profile("", [](bool) { return std::string(); });
  return dip_profile(",power_capped_pct,power_limit_w", [](bool dip) { return fmt::format(",{},700", dip ? 70 : 5); });
}

TEST(Regions, DipsHeldAtThePowerLimitFormAPowerCapRegionOnlyWhereTheProfileSaysSo) {
  const testing_support::ScratchDir dir;
  for (const bool with_power_cap : {true, false}) {
    const std::filesystem::path file =
        dir.write(with_power_cap ? "capped.csv" : "old.csv", capped_profile(with_power_cap));
    const Series series = read_series_file(file.string(), {}).at(0);
    const SeriesAnalysis analysis = analyze_series(series, AnalysisOptions{}, MWeights());
    ASSERT_EQ(analysis.findings.size(), 2u);
    const std::vector<Region> regions = regions_of(analysis);
    ASSERT_EQ(regions.size(), 1u);
    const nlohmann::json json = regions_json(regions, analysis);
    if (!with_power_cap) {
      EXPECT_FALSE(regions[0].cause) << describe_cause(regions[0]);
      EXPECT_TRUE(json[0]["cause"].is_null());
      continue;
    }
    ASSERT_TRUE(regions[0].cause);
    EXPECT_EQ(regions[0].cause->kind, CauseKind::power_cap) << describe_cause(regions[0]);
    EXPECT_EQ(regions[0].supported_findings.size(), 2u);
    EXPECT_NE(regions[0].cause->evidence.find("70.0% of its time held down by the board's 700 W power limit"),
              std::string::npos)
        << regions[0].cause->evidence;
    EXPECT_EQ(json[0]["cause"]["kind"], "power cap");
  }
}

// A grouped profile over M = 8 … 160: every M puts M/2 rows of tokens on this GPU's experts and the kernel computes
// 128 rows in the same 90 µs, but M = 96 gets 33 rows of tokens; its kernel computes `executed_at_96` rows there.
std::string grouped_profile(int64_t executed_at_96) {
  std::string text = "batch,kernel_time,flops,utils,kernel_name,m,n,k,kernel,device,status,time_us_min,time_us_max,"
                     "groups,active_groups,rows_max,useful_rows,executed_rows\n";
  for (int64_t m = 8; m <= 160; m += 8) {
    const int64_t useful = m == 96 ? 33 : m / 2;
    const double utils = static_cast<double>(useful) / 1000;
    text += fmt::format("{},90,{},{},experts/m16n128k128,{},2880,2880,experts,Fake GPU,ok,89.9,90.1,16,16,8,{},{}\n", m,
                        utils, utils, m, useful, m == 96 ? executed_at_96 : 128);
  }
  return text;
}

TEST(Regions, FewerTokensOnTheSameExpertRowsFormAnExpertRowsRegionOnlyWhereTheRowsSaySo) {
  const testing_support::ScratchDir dir;
  const auto only_region = [&](const std::string& name, int64_t executed_at_96) {
    const Series series = read_series_file(dir.write(name, grouped_profile(executed_at_96)).string(), {}).at(0);
    const SeriesAnalysis analysis = analyze_series(series, AnalysisOptions{}, MWeights());
    EXPECT_EQ(analysis.findings.size(), 1u) << name;
    const std::vector<Region> regions = regions_of(analysis);
    EXPECT_EQ(regions.size(), 1u) << name;
    return regions.empty() ? Region{} : regions.front();
  };
  // 33 of 128 computed rows held tokens vs 44 of 128 at M = 88: 25% less MFU, all of the drop.
  const Region padded = only_region("padded.csv", 128);
  ASSERT_TRUE(padded.cause) << describe_cause(padded);
  EXPECT_EQ(padded.cause->kind, CauseKind::expert_rows);
  EXPECT_NE(padded.cause->evidence.find("M=96 put 33 rows of tokens on this GPU's experts, of 128 rows"),
            std::string::npos)
      << padded.cause->evidence;
  // The kernel computed 96 rows for them: as much work per token as at M = 88, no cause.
  const Region lean = only_region("lean.csv", 96);
  EXPECT_FALSE(lean.cause) << describe_cause(lean);
}

TEST(Regions, AMemberTheRunsReferenceLeavesWithoutACauseKeepsItsOwn) {
  // M = 100 … 200 at MFU 1 and 1000 MHz; M = 150 dips without a cause, M = 160 runs faster at 1500 MHz and
  // M = 170 dips again, at 1000 MHz: against M = 160, the best smaller M, its slower clock is its cause; against
  // the run's reference, which ran at 1000 MHz too, it has none.
  Series series = testing::flat_series(100, 200, 10, "gemm");
  for (SeriesPoint& point : series.points) {
    point.utils = point.m == 150 ? 0.7 : point.m == 160 ? 1.1 : point.m == 170 ? 0.75 : 1.0;
    point.time_us = static_cast<double>(point.m) / point.utils;
    point.sm_clock_mhz = point.m == 160 ? 1500 : 1000;
  }
  AnalysisOptions options;
  options.rule = AnomalyRule::study;
  const SeriesAnalysis analysis = analyze_series(series, options, MWeights());
  ASSERT_EQ(analysis.findings.size(), 2u);
  const std::vector<Region> regions = regions_of(analysis);
  const auto at_170 = std::find_if(regions.begin(), regions.end(), [&](const Region& region) {
    return std::any_of(region.supported_findings.begin(), region.supported_findings.end(),
                       [&](std::size_t f) { return analysis.findings[f].anomaly.m == 170; });
  });
  ASSERT_NE(at_170, regions.end());
  EXPECT_EQ(at_170->cause->kind, CauseKind::throttling) << describe_cause(*at_170);
  EXPECT_NE(at_170->cause->evidence.find("vs 1500 MHz at M=160"), std::string::npos) << at_170->cause->evidence;
  // M = 150 has no cause against any reference and none is claimed for it.
  for (const Region& region : regions) {
    for (const std::size_t f : region.supported_findings) EXPECT_NE(analysis.findings[f].anomaly.m, 150);
  }
}

TEST(Regions, AnUnmeasuredGridIsNamedAndNeverAReference) {
  const SyntheticSweep sweep = synthetic_sweep(quiet_spec({{CliffKind::multi_batch, 0.3}}, 9));
  Series partial = sweep.series;
  // An adaptive search's view: the grid of the full sweep, every third M measured plus the cliff.
  for (const SeriesPoint& point : sweep.series.points) partial.m_grid.push_back(point.m);
  partial.points.clear();
  for (std::size_t i = 0; i < sweep.series.points.size(); ++i) {
    const bool in_cliff = i + 2 >= sweep.cliffs[0].first && i <= sweep.cliffs[0].first + sweep.cliffs[0].count + 1;
    if (i % 3 == 0 || in_cliff) partial.points.push_back(sweep.series.points[i]);
  }
  const UnmeasuredM unmeasured = unmeasured_m(partial);
  EXPECT_EQ(unmeasured.grid_points, sweep.series.points.size());
  EXPECT_EQ(unmeasured.count, sweep.series.points.size() - partial.points.size());
  EXPECT_EQ(unmeasured.ranges.front(), (std::pair<int64_t, int64_t>{20, 24}));
  EXPECT_NE(describe_unmeasured(unmeasured, 3).find(" of 1500 grid M not measured"), std::string::npos);

  const SeriesAnalysis analysis = analyze_series(partial, {}, MWeights());
  ASSERT_FALSE(analysis.findings.empty());
  for (const Finding& finding : analysis.findings) {
    const auto measured = std::find_if(partial.points.begin(), partial.points.end(), [&](const SeriesPoint& point) {
      return point.m == finding.anomaly.reference_m;
    });
    EXPECT_NE(measured, partial.points.end()) << "reference M=" << finding.anomaly.reference_m;
  }
  const std::vector<Region> regions = regions_of(analysis);
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_LE(regions[0].first_m, sweep.series.points[sweep.cliffs[0].first].m);
}

}  // namespace
}  // namespace shapescope::analyze
