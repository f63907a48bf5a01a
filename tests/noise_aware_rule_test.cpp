#include "analyze/noise_aware_rule.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "analyze/low_utils_rule.hpp"
#include "analyze/read_multipass_csv.hpp"
#include "common/user_error.hpp"
#include "triage_test_support.hpp"

namespace shapescope::analyze {
namespace {

using triage_testing::data_file;
using triage_testing::flagged_ms;
using triage_testing::inject_step;
using triage_testing::noisy_series;

double set_jaccard(const std::set<int64_t>& a, const std::set<int64_t>& b) {
  std::size_t both = 0;
  for (const int64_t m : a) both += b.count(m);
  const std::size_t either = a.size() + b.size() - both;
  return either == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(either);
}

std::size_t index_of(const Series& series, int64_t m) {
  const auto found = std::find_if(series.points.begin(), series.points.end(),
                                  [m](const SeriesPoint& point) { return point.m == m; });
  EXPECT_NE(found, series.points.end()) << "M=" << m << " not measured";
  return static_cast<std::size_t>(found - series.points.begin());
}

TEST(NoiseAwareRule, FlatNoisySweepHasNoAnomalies) {
  const Series flat = noisy_series(2000, 0.02, [](std::size_t) { return 0.7; });
  EXPECT_TRUE(noise_aware_anomalies(flat, {}).empty());
}

TEST(NoiseAwareRule, OneLuckyPointDoesNotRaiseTheBar) {
  Series series = noisy_series(400, 0.01, [](std::size_t) { return 0.7; });
  inject_step(series, 100, 1, 1.25);  // the study's rule would measure all later points against this
  EXPECT_GT(low_utils_anomalies(series, 0.85).size(), 250u);
  EXPECT_TRUE(noise_aware_anomalies(series, {}).empty());
}

TEST(NoiseAwareRule, SlowDriftIsNotAnAnomaly) {
  // The GPU warms up and its clock sags: MFU falls 25% over the sweep, smoothly in M order.
  const Series drifting = noisy_series(3000, 0.01, [](std::size_t i) { return 0.8 * (1 - 0.25 * i / 3000.0); });
  EXPECT_GT(low_utils_anomalies(drifting, 0.85).size(), 1000u);
  EXPECT_TRUE(noise_aware_anomalies(drifting, {}).empty());
}

TEST(NoiseAwareRule, StepDropIsFlaggedOverItsWholeRange) {
  Series series = noisy_series(1000, 0.01, [](std::size_t) { return 0.7; });
  inject_step(series, 300, 200, 0.8);  // longer than the window: skipping flagged points keeps the bar
  const std::set<int64_t> flagged = flagged_ms(noise_aware_anomalies(series, {}));
  std::set<int64_t> injected;
  for (std::size_t i = 300; i < 500; ++i) injected.insert(series.points[i].m);
  EXPECT_EQ(flagged, injected);
}

TEST(NoiseAwareRule, LoneDipIsFlaggedWhereItIsBeyondTheLocalNoise) {
  // 16% below its neighbours: past the bar either way, beyond 1% noise but within 8%.
  Series quiet = noisy_series(600, 0.01, [](std::size_t) { return 0.7; });
  quiet.points[200].utils = 0.7 * 0.5;
  quiet.points[400].utils = 0.7 * 0.84;
  const std::vector<NoiseAwareAnomaly> found = noise_aware_findings(quiet, {});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].anomaly.m, quiet.points[200].m);
  EXPECT_EQ(found[0].evidence, NoiseEvidence::drop);
  EXPECT_NEAR(found[0].anomaly.drop(), 0.5, 0.05);
  EXPECT_EQ(found[1].anomaly.m, quiet.points[400].m);

  Series loud = noisy_series(600, 0.08, [](std::size_t) { return 0.7; });
  loud.points[200].utils = 0.7 * 0.5;
  loud.points[400].utils = 0.7 * 0.84;
  const std::set<int64_t> flagged = flagged_ms(noise_aware_anomalies(loud, {}));
  EXPECT_EQ(flagged, std::set<int64_t>{loud.points[200].m});
}

TEST(NoiseAwareRule, NeighbouringDipsOfTheSameCliffDoNotHideIt) {
  // A -30% batch whose eight predecessors dip by 8-14% (partial waves of the same cliff), in
  // 2% noise. Over a 16-batch window holding those dips the noise looked several times larger
  // and the rule before this one missed the cliff; the local noise leaves the nearest out and
  // is robust to the rest.
  Series series = noisy_series(600, 0.02, [](std::size_t) { return 0.7; });
  for (std::size_t i = 292; i < 300; ++i) inject_step(series, i, 1, 0.92 - 0.06 * static_cast<double>(i - 292) / 7);
  inject_step(series, 300, 1, 0.7);
  const std::set<int64_t> flagged = flagged_ms(noise_aware_anomalies(series, {}));
  EXPECT_TRUE(flagged.count(series.points[300].m));
  for (std::size_t i = 292; i < 300; ++i) EXPECT_FALSE(flagged.count(series.points[i].m)) << "dips within the bar";
}

TEST(NoiseAwareRule, StatedUncertaintyDecides) {
  Series series = noisy_series(600, 0.002, [](std::size_t) { return 0.7; });
  inject_step(series, 300, 3, 0.8);
  for (SeriesPoint& point : series.points) point.ci95_us = 0.002 * 1.96 * point.time_us;
  EXPECT_EQ(noise_aware_anomalies(series, {}).size(), 3u);
  for (SeriesPoint& point : series.points) point.ci95_us = 0.08 * 1.96 * point.time_us;  // ±16%: a 20% drop is noise
  const auto found = noise_aware_findings(series, {});
  EXPECT_TRUE(found.empty());
}

TEST(NoiseAwareRule, AlternatingKernelsAreStructureNotNoise) {
  // The library picks a slow kernel at every other M (e.g. by M mod 8): judged as one
  // group the window would look 30% noisy and hide it; per kernel it is 1% noise.
  Series series = noisy_series(400, 0.01, [](std::size_t) { return 0.7; });
  for (std::size_t i = 0; i < series.points.size(); ++i) series.points[i].kernel_name = "fast";
  for (std::size_t i = 201; i < 300; i += 2) {
    series.points[i].kernel_name = "slow";
    inject_step(series, i, 1, 0.72);
  }
  std::set<int64_t> slow;
  for (std::size_t i = 201; i < 300; i += 2) slow.insert(series.points[i].m);
  EXPECT_EQ(flagged_ms(noise_aware_anomalies(series, {})), slow);
}

TEST(NoiseAwareRule, PartialProfileIsJudgedByItsNeighbourhoodInM) {
  // A sweep that rises and bends over (as MFU does with M), a lone 2-point dip of 17% in the bend; an
  // adaptive search measured every 12th M and the dip. 48 batches of the partial profile span a curved
  // stretch whose curvature would pass for noise; its neighbourhood in M shows the noise of the dense one.
  const auto curve = [](std::size_t i) { return 0.8 * (1 - 0.8 * std::exp(-static_cast<double>(i) / 300.0)); };
  Series dense = noisy_series(3000, 0.003, curve);
  inject_step(dense, 900, 2, 0.83);
  Series sparse = dense;
  sparse.points.clear();
  for (std::size_t i = 0; i < dense.points.size(); ++i) {
    sparse.m_grid.push_back(dense.points[i].m);
    if (i % 12 == 0 || i == 900 || i == 901) sparse.points.push_back(dense.points[i]);
  }
  const std::set<int64_t> dip = {dense.points[900].m, dense.points[901].m};
  EXPECT_EQ(flagged_ms(noise_aware_anomalies(dense, {})), dip);
  EXPECT_EQ(flagged_ms(noise_aware_anomalies(sparse, {})), dip);
}

TEST(NoiseAwareRule, RejectsUnusableOptions) {
  const Series series = noisy_series(50, 0.01, [](std::size_t) { return 0.7; });
  NoiseAwareOptions options;
  options.window = 2;
  EXPECT_THROW(noise_aware_anomalies(series, options), UserError);
  options = {};
  options.envelope_quantile = 1.0;
  EXPECT_THROW(noise_aware_anomalies(series, options), UserError);
}

TEST(SharedProfiles, TwoPassH200PassesDifferByOneLoneDipOfPassOne) {
  const std::vector<Series> passes = read_multipass_csv(data_file(triage_testing::kTwoPassH200).string(), {});
  ASSERT_EQ(passes.size(), 2u);
  // The study's rule, for contrast: 1667 and 50 anomalies, Jaccard 0.016 (data/README.md).
  const std::set<int64_t> study1 = flagged_ms(low_utils_anomalies(passes[0], 0.85));
  const std::set<int64_t> study2 = flagged_ms(low_utils_anomalies(passes[1], 0.85));
  EXPECT_EQ(study1.size(), 1667u);
  EXPECT_EQ(study2.size(), 50u);
  EXPECT_LT(set_jaccard(study1, study2), 0.02);

  // M=704 runs at half the MFU of its neighbours in both passes. M=508 ran 20% below its
  // neighbours in pass 1 only (a disturbed measurement that one pass cannot tell from a
  // cliff; two passes can, see PassAgreement.*).
  EXPECT_EQ(flagged_ms(noise_aware_anomalies(passes[0], {})), (std::set<int64_t>{508, 704}));
  EXPECT_EQ(flagged_ms(noise_aware_anomalies(passes[1], {})), (std::set<int64_t>{704}));
  const auto around = [](const Series& pass, int64_t m) {
    const std::size_t i = index_of(pass, m);
    return pass.points[i].utils / (0.5 * (pass.points[i - 1].utils + pass.points[i + 1].utils));
  };
  EXPECT_LT(around(passes[0], 508), 0.82);
  EXPECT_GT(around(passes[1], 508), 0.98);
}

TEST(SharedProfiles, TwoPassH200CliffHoldsAcrossWindowsAndQuantiles) {
  const std::vector<Series> passes = read_multipass_csv(data_file(triage_testing::kTwoPassH200).string(), {});
  for (const int window : {8, 16, 32, 64}) {
    for (const double quantile : {0.75, 0.9}) {
      NoiseAwareOptions options;
      options.window = window;
      options.envelope_quantile = quantile;
      EXPECT_TRUE(flagged_ms(noise_aware_anomalies(passes[0], options)).count(704))
          << "window " << window << ", quantile " << quantile;
      EXPECT_EQ(flagged_ms(noise_aware_anomalies(passes[1], options)), std::set<int64_t>{704})
          << "window " << window << ", quantile " << quantile;
    }
  }
}

TEST(SharedProfiles, InjectedStepsIntoMeasuredProfilesAreFlagged) {
  // -20% over 64 batches at three places of each H200 pass, and at two smooth
  // stretches of the RTX 4090 (torch 2.3.0) profile. The bar stays where the step
  // began, so where the profile underneath rises by more than the bar's margin during
  // the step (H200 pass 2 from M=4196, a 5% wave) the step's tail is no longer below it.
  std::vector<std::pair<Series, std::vector<std::size_t>>> cases;
  for (Series& pass : read_multipass_csv(data_file(triage_testing::kTwoPassH200).string(), {})) {
    cases.push_back({std::move(pass), {1000, 3000, 6000}});
  }
  cases.push_back({read_series_file(data_file(triage_testing::kRtx4090Torch230).string(), {}).at(0), {3000, 6000}});
  for (const auto& [measured, firsts] : cases) {
    for (const std::size_t first : firsts) {
      Series series = measured;
      inject_step(series, first, 64, 0.8);
      const std::set<int64_t> flagged = flagged_ms(noise_aware_anomalies(series, {}));
      std::size_t found = 0;
      for (std::size_t i = first; i < first + 64; ++i) found += flagged.count(series.points[i].m);
      EXPECT_TRUE(flagged.count(series.points[first].m)) << series.name << ": -20% from M=" << series.points[first].m;
      EXPECT_GE(found, 56u) << series.name << ": -20% from M=" << series.points[first].m;
    }
  }
}

TEST(SharedProfiles, StepsPastTheBarAreFlaggedInANoisyStretch) {
  // Around M=4000 the RTX 4090 (torch 2.3.0) profile scatters by 2.4% from point to point.
  const Series measured = read_series_file(data_file(triage_testing::kRtx4090Torch230).string(), {}).at(0);
  const auto flagged_in_step = [&](double factor) {
    Series series = measured;
    inject_step(series, 1000, 64, factor);
    const std::set<int64_t> flagged = flagged_ms(noise_aware_anomalies(series, {}));
    std::size_t found = 0;
    for (std::size_t i = 1000; i < 1064; ++i) found += flagged.count(series.points[i].m);
    return found;
  };
  EXPECT_EQ(flagged_in_step(0.9), 0u) << "a -10% step is within the bar";
  EXPECT_EQ(flagged_in_step(0.7), 64u);
}

TEST(SharedProfiles, A800AlternatingKernelDipsAreFlagged) {
  // From M=968 to 1024 the library alternates a 0.52-MFU kernel (M % 8 == 0) with a 0.71 one.
  const Series series = read_series_file(
      data_file("fairyspeed/torchgemm_NVIDIA_A800_80GB_PCIe_torch_2.5.1+cu124_K4096_N4096_float16.csv").string(), {})
                            .at(0);
  const std::set<int64_t> flagged = flagged_ms(noise_aware_anomalies(series, {}));
  for (int64_t m = 968; m <= 1024; m += 8) EXPECT_TRUE(flagged.count(m)) << "M=" << m;
  for (int64_t m = 972; m <= 1020; m += 8) EXPECT_FALSE(flagged.count(m)) << "M=" << m;
}

TEST(SharedProfiles, Rtx4090KernelSwitchCliffAt3076IsFlagged) {
  // 128x128 -> 128x64 at M=3076: MFU 0.872 -> 0.743 (at M=2180 the same switch lands 14.6%
  // below the level of the batches before it, just short of the bar).
  const std::vector<Series> rtx = read_series_file(data_file(triage_testing::kRtx4090Torch251).string(), {});
  ASSERT_EQ(rtx.size(), 1u);
  const Series& series = rtx[0];
  const auto found = noise_aware_findings(series, {});
  const auto at_3076 = std::find_if(found.begin(), found.end(), [](const auto& f) { return f.anomaly.m == 3076; });
  ASSERT_NE(at_3076, found.end());
  EXPECT_EQ(at_3076->evidence, NoiseEvidence::drop);
  EXPECT_NEAR(at_3076->anomaly.utils, 0.74271, 1e-9);
  EXPECT_GT(at_3076->anomaly.reference_utils, 0.87);
  EXPECT_NE(series.points[index_of(series, 3076)].kernel_name, series.points[index_of(series, 3072)].kernel_name);
}

TEST(SharedProfiles, WaveQuantizationCliffInTheRisingPartIsFlagged) {
  // RTX 4090 (torch 2.3.0): M=128 -> 132 starts a new wave of tiles, MFU 0.612 -> 0.438, while
  // the MFU still rises steeply with M; the noise around a trend line is small, so the cliff
  // is far beyond it.
  const Series series = read_series_file(data_file(triage_testing::kRtx4090Torch230).string(), {}).at(0);
  EXPECT_TRUE(flagged_ms(noise_aware_anomalies(series, {})).count(132));
}

}  // namespace
}  // namespace shapescope::analyze
