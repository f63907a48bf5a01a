#include "analyze/explain.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "analyze/low_utils_rule.hpp"
#include "analyze/noise_aware_rule.hpp"
#include "analyze_test_support.hpp"
#include "triage_test_support.hpp"

namespace shapescope::analyze {
namespace {

using triage_testing::data_file;

TEST(Explain, ParsesTilesFromVendorKernelNames) {
  // cuBLAS's kernels, marked with its operand layout, name the tile in its column-major terms: our N x M.
  EXPECT_EQ(tile_from_kernel_name("ampere_fp16_s1688gemm_fp16_128x64_ldg8_f2f_nn"), (TileShape{64, 128}));
  EXPECT_EQ(tile_from_kernel_name("void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_"
                                  "align8>(cutlass_80_tensorop_f16_s16816gemm_relu_f16_256x128_32x3_nn_align8::Params)"),
            (TileShape{128, 256}));
  EXPECT_EQ(tile_from_kernel_name("sm90_xmma_gemm_256x64_tn"), (TileShape{64, 256}));
  // Without the layout a name keeps its order; cuBLAS's xmma tile sizes put the rows of M first.
  EXPECT_EQ(tile_from_kernel_name("gemm_256x64_kernel"), (TileShape{256, 64}));
  EXPECT_EQ(tile_from_kernel_name("sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize160x128x32_stage4_warpsize2x2x1_"
                                  "tensor16x8x16_kernel"),
            (TileShape{160, 128}));
  // A layout letter pair inside a longer token is none ("turn", "gemm_nnz").
  EXPECT_EQ(tile_from_kernel_name("gemm_nnz_128x64"), (TileShape{128, 64}));
  EXPECT_EQ(tile_from_kernel_name("a8w8_blockscale_1x128x128_256x64x128x128_16x16_32x32_2x2_8x32x1_8x32x1_1x32x1x8_8_"
                                  "1x1_intrawave_v3"),
            (TileShape{64, 128}));
  EXPECT_EQ(tile_from_kernel_name("a8w8_blockscale_cktile_32x128x128_1x4x1_16x16x64_intrawave_0x1x0_4"),
            (TileShape{32, 128}));
  EXPECT_EQ(tile_from_kernel_name("_ZN5aiter42fp8gemm_bf16_blockscale_BpreShuffle_96x128E"), (TileShape{96, 128}));
  EXPECT_FALSE(tile_from_kernel_name("gemvx::kernel<long, long, __half, float, 9, false>"));
  EXPECT_FALSE(tile_from_kernel_name(""));
  // A digit run beyond int64 (the fuzzer's find) is no tile and no exception.
  EXPECT_FALSE(tile_from_kernel_name("gemm_99999999999999999999999x128_nn"));
}

TEST(Explain, ParsesCutlassStyleTileTokens) {
  EXPECT_EQ(tile_from_kernel_name("fp8_blockscale/ws_m128n256k128_kgroups1_s3_splitk1_grid112+pdl"),
            (TileShape{128, 256}));
  EXPECT_EQ(tile_from_kernel_name("a16w8_blockscale_batched/mma16816_m32n64k128x1_s4"), (TileShape{32, 64}));
  EXPECT_FALSE(tile_from_kernel_name("fp8_blockscale"));
}

// A tile of zero rows or columns, or past any CTA's size, would divide by zero or overflow counting tiles: none.
TEST(Explain, TileTokensWithZerosOrBeyondAnyCtaAreNoTile) {
  for (const char* name : {"sm90_xmma_gemm_tilesize0x0x0_nn", "ck_256x0x128x64_intrawave", "gemm_cktile_0x0x0_k",
                           "ck_1x9223372036854775807x1x1", "gemm_cktile_9223372036854775807x1x1", "ws_m0n0k0",
                           "gemm_9223372036854775807x9223372036854775807_nn", "cublasLt algo=1 tile=0x0"}) {
    const std::optional<TileShape> tile = tile_from_kernel_name(name);
    EXPECT_FALSE(tile) << name << ": " << tile->m << "x" << tile->n;
  }
}

// Names of hundreds of thousands of characters (a template-laden name, a file that is no profile) are scanned
// without recursion per character: no stack overflow.
TEST(Explain, ReadsKernelNamesOfAnyLength) {
  EXPECT_FALSE(tile_from_kernel_name(std::string(300000, 'a')));
  EXPECT_EQ(tile_from_kernel_name("k_" + std::string(300000, 'a') + "_128x64"), (TileShape{128, 64}));
  EXPECT_EQ(launched_kernel("k_grid" + std::string(300000, '7') + "+pdl"), "k");
  EXPECT_EQ(launched_kernel("a_grid_b+pd"), "a_grid_b+pd");
}

// Waves of sizes whose products pass int64's end stay counted, not overflowed.
TEST(Explain, WavesOfHugeSizesSaturate) {
  const Waves waves = waves_of(INT64_MAX, INT64_MAX, {16, 16}, 132, INT64_MAX, INT64_MAX);
  EXPECT_EQ(waves.tiles, INT64_MAX);
  EXPECT_GT(waves.waves, 0);
  EXPECT_TRUE(std::isfinite(waves.efficiency));
  EXPECT_EQ(waves_of(INT64_MAX, 128, {64, 64}, 4).tiles, (INT64_MAX / 64 + 1) * 2);
}

// A series on a 4-SM device, N = 128 with 64x64 tiles: 2 tile columns, so M up to 128
// is one full wave of 4 tiles and M = 129 needs 6 tiles, a second wave half full.
Series wave_series() {
  Series series;
  series.name = "waves";
  series.n = 128;
  series.k = 4096;
  series.multiprocessors = 4;
  for (const int64_t m : {32, 64, 96, 128, 129, 160}) {
    SeriesPoint point;
    point.m = m;
    point.kernel_name = "tile_64x64_kernel";
    point.time_us = m <= 128 ? 10 : 20;
    point.utils = static_cast<double>(m) / point.time_us / 10;
    series.points.push_back(point);
  }
  return series;
}

// M = 129 against M = 128 in wave_series(), with their MFU.
Anomaly anomaly_at_129(const Series& series) { return testing::anomaly_against(series, 4, 3); }

TEST(Explain, WaveBoundaryCrossedIsACause) {
  const Series series = wave_series();
  const Explanation explanation = explain_anomaly(series, anomaly_at_129(series));
  ASSERT_EQ(explanation.causes.size(), 1u);
  EXPECT_EQ(explanation.causes[0].kind, CauseKind::wave_quantization);
  EXPECT_NE(explanation.causes[0].evidence.find("6 tiles on 4 SMs = 2 wave(s)"), std::string::npos)
      << explanation.causes[0].evidence;
}

// A cuBLAS kernel's "128x64" is 128 rows of N by 64 of M: on 3 SMs with N = 128, M = 192 is 3 tiles (one full
// wave) and M = 193 is 4 (a second wave); read as 128 rows of M it would be 4 tiles at both, no cause.
TEST(Explain, CublasLayoutKernelTileIsReadTransposed) {
  const auto explain_193 = [](const std::string& kernel_name) {
    Series series;
    series.n = 128;
    series.k = 4096;
    series.multiprocessors = 3;
    for (const int64_t m : {64, 128, 192, 193, 224}) {
      SeriesPoint point;
      point.m = m;
      point.kernel_name = kernel_name;
      point.time_us = m <= 192 ? 10 : 20;
      point.utils = static_cast<double>(m) / point.time_us / 10;
      series.points.push_back(point);
    }
    return explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  };
  const Explanation cublas = explain_193("ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_32x5_nn");
  ASSERT_EQ(cublas.causes.size(), 1u) << cublas.summary();
  EXPECT_EQ(cublas.causes[0].kind, CauseKind::wave_quantization);
  EXPECT_NE(cublas.causes[0].evidence.find("64x128 tiles: ⌈193/64⌉·⌈128/128⌉ = 4 tiles on 3 SMs = 2 wave(s)"),
            std::string::npos)
      << cublas.causes[0].evidence;
  const Explanation row_major = explain_193("gemm_128x64_kernel");
  EXPECT_FALSE(row_major.explained()) << row_major.summary();
}

// shapescope's cuBLASLt description names the tile as rows x columns of cuBLASLt's D (our
// N x M): "tile=256x64" is 64 rows of M by 256 columns of N.
TEST(Explain, CublasLtDescriptionTileIsReadTransposed) {
  EXPECT_EQ(tile_from_kernel_name("cublasLt algo=66 tile=256x64 stages=64xAUTO splitK=1 reduction=NONE swizzle=0 "
                                  "custom=0 inner=AUTO cluster=1x2x1"),
            (TileShape{64, 256}));
  // On the wave series (N = 128, 4 SMs) a 128-row (N) x 64-column (M) tile makes
  // ⌈129/64⌉·⌈128/128⌉ = 3 tiles at M = 129 (75% of a wave) and 2 at M = 128 (50%); read
  // untransposed it would be ⌈129/128⌉·⌈128/64⌉ = 4 tiles, a full wave.
  Series series = wave_series();
  for (SeriesPoint& point : series.points) point.kernel_name = "cublasLt algo=66 tile=128x64 stages=64xAUTO splitK=1";
  const Explanation explanation = explain_anomaly(series, anomaly_at_129(series));
  const auto ruled = std::find_if(explanation.ruled_out.begin(), explanation.ruled_out.end(),
                                  [](const std::string& reason) { return reason.starts_with("waves"); });
  ASSERT_NE(ruled, explanation.ruled_out.end()) << explanation.summary();
  EXPECT_EQ(*ruled, "waves 75% full vs 50% at M=128");
}

// shapescope profiles record the tile (and split-K) in columns: explain reads them and parses no name.
TEST(Explain, TheTileColumnsOverTheKernelName) {
  Series series = wave_series();
  for (SeriesPoint& point : series.points) {
    point.kernel_name = "a kernel whose name carries no tile";
    point.tile = TileShape{64, 64};
  }
  Explanation explanation = explain_anomaly(series, anomaly_at_129(series));
  ASSERT_EQ(explanation.causes.size(), 1u) << explanation.summary();
  EXPECT_EQ(explanation.causes[0].kind, CauseKind::wave_quantization);
  EXPECT_NE(explanation.causes[0].evidence.find("6 tiles on 4 SMs = 2 wave(s)"), std::string::npos)
      << explanation.causes[0].evidence;
  // The columns win over a tile the name seems to carry.
  for (SeriesPoint& point : series.points) point.kernel_name = "tile_32x32_kernel";
  explanation = explain_anomaly(series, anomaly_at_129(series));
  ASSERT_EQ(explanation.causes.size(), 1u) << explanation.summary();
  EXPECT_NE(explanation.causes[0].evidence.find("64x64 tiles"), std::string::npos) << explanation.causes[0].evidence;
  // Split-K multiplies the CTAs: 4 tiles x 2 = 8 CTAs fill two waves at M = 128, 12 fill three at M = 129; the
  // waves stay full, and what is lost is the third tile row, which holds one row of output.
  for (SeriesPoint& point : series.points) point.split_k = 2;
  explanation = explain_anomaly(series, anomaly_at_129(series));
  ASSERT_EQ(explanation.causes.size(), 1u) << explanation.summary();
  EXPECT_NE(explanation.causes[0].evidence.find("6 tiles × 2 split-K = 12 CTAs on 4 SMs = 3 wave(s), 100% full"),
            std::string::npos)
      << explanation.causes[0].evidence;
  EXPECT_NE(explanation.causes[0].evidence.find("67% of the tiles' area holds output vs 100%"), std::string::npos)
      << explanation.causes[0].evidence;
  // Neither columns nor a tile in the name: no wave claim, and the reason says where it looked.
  for (SeriesPoint& point : series.points) {
    point.tile.reset();
    point.kernel_name = "a kernel whose name carries no tile";
  }
  EXPECT_NE(explain_anomaly(series, anomaly_at_129(series)).summary().find("no tile shape in the profile or the "
                                                                          "kernel name"),
            std::string::npos);
}

TEST(Explain, NoiseAndThrottlingFromTheColumns) {
  Series series = wave_series();
  series.multiprocessors = 0;  // no SM count: no wave claim
  series.device = "";
  for (SeriesPoint& point : series.points) point.ci95_us = 0.4 * point.time_us;
  series.points[4].throttled = true;
  const Explanation explanation = explain_anomaly(series, anomaly_at_129(series));  // drop 50%, spread ±57%
  ASSERT_EQ(explanation.causes.size(), 2u);
  EXPECT_EQ(explanation.causes[0].kind, CauseKind::noise);
  EXPECT_EQ(explanation.causes[1].kind, CauseKind::throttling);
}

TEST(Explain, ASlowerSmClockThatAccountsForTheDropIsThrottling) {
  Series series = wave_series();
  series.multiprocessors = 0;
  for (SeriesPoint& point : series.points) point.sm_clock_mhz = 1980;
  series.points[4].sm_clock_mhz = 1000;  // −49% clock against a −50% MFU drop
  const Explanation explanation = explain_anomaly(series, anomaly_at_129(series));
  ASSERT_EQ(explanation.causes.size(), 1u) << explanation.summary();
  EXPECT_EQ(explanation.causes[0].kind, CauseKind::throttling);
  EXPECT_NE(explanation.causes[0].evidence.find("SM clock 1000 MHz at M=129 vs 1980 MHz at M=128"), std::string::npos)
      << explanation.causes[0].evidence;
  series.points[4].sm_clock_mhz = 1900;  // −4% of the clock cannot explain −50%
  EXPECT_FALSE(explain_anomaly(series, anomaly_at_129(series)).explained());
}

// M = 100, 110, …, 160 at MFU 1 with kernel "gemm_a", no SM count (no wave claim) and no spread.
Series flat_series() { return testing::flat_series(100, 160, 10, "gemm_a"); }

void run_at(Series& series, std::size_t index, const std::string& kernel, double utils) {
  series.points[index].kernel_name = kernel;
  series.points[index].utils = utils;
}

bool has_kernel_switch(const Explanation& explanation) {
  return std::any_of(explanation.causes.begin(), explanation.causes.end(),
                     [](const Cause& cause) { return cause.kind == CauseKind::kernel_switch; });
}

TEST(Explain, AKernelSwitchHoldsWhereTheNewKernelIsSlow) {
  Series series = flat_series();
  run_at(series, 3, "gemm_b", 0.7);  // M = 130 and 140 run gemm_b, 30% slower
  run_at(series, 4, "gemm_b", 0.7);
  const Explanation explanation = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  EXPECT_TRUE(has_kernel_switch(explanation)) << explanation.summary();
  // A new launch grid alone is no new kernel.
  for (SeriesPoint& point : series.points)
    point.kernel_name = point.kernel_name == "gemm_b" ? "gemm_a_grid96" : "gemm_a_grid112";
  EXPECT_NE(explain_anomaly(series, testing::anomaly_against(series, 3, 2)).summary().find("same kernel as M=120"),
            std::string::npos);
}

TEST(Explain, AKernelThatRanWithoutTheDropNextToItIsNoCause) {
  Series series = flat_series();
  run_at(series, 3, "gemm_b", 0.7);   // M = 130: −30% with gemm_b …
  run_at(series, 4, "gemm_b", 0.98);  // … which runs at M = 140 without the drop
  Explanation explanation = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  EXPECT_FALSE(has_kernel_switch(explanation)) << explanation.summary();
  EXPECT_NE(explanation.summary().find("the same kernel ran at M=140 with MFU 0.980"), std::string::npos)
      << explanation.summary();
  // Where gemm_b took over (M = 130) it ran without the drop that M = 140 has: the switch is not its cause.
  series = flat_series();
  run_at(series, 3, "gemm_b", 0.99);
  run_at(series, 4, "gemm_b", 0.7);
  explanation = explain_anomaly(series, testing::anomaly_against(series, 4, 2));
  EXPECT_FALSE(has_kernel_switch(explanation)) << explanation.summary();
  EXPECT_NE(explanation.summary().find("the same kernel ran at M=130"), std::string::npos) << explanation.summary();
  // The next measured M far past this one (a sparse grid) says nothing about it.
  series = flat_series();
  run_at(series, 3, "gemm_b", 0.7);
  run_at(series, 4, "gemm_b", 0.98);
  for (std::size_t i = 4; i < series.points.size(); ++i) series.points[i].m *= 10;
  EXPECT_TRUE(has_kernel_switch(explain_anomaly(series, testing::anomaly_against(series, 3, 2))));
}

bool has_transient(const Explanation& explanation) {
  return std::any_of(explanation.causes.begin(), explanation.causes.end(),
                     [](const Cause& cause) { return cause.kind == CauseKind::transient; });
}

TEST(Explain, ATransientIsWhereTheSameKernelBesideItRanThatSlowForAMoment) {
  // M = 130 runs 25% below the level (173.3 µs, 170 µs in its fastest sample); M = 140, the same kernel, runs
  // at the level in its median (140 µs) but took 190 µs in its slowest sample: 176.4 µs at M = 130's work.
  Series series = flat_series();
  series.points[3].utils = 0.75;
  series.points[3].time_us = 130 / 0.75;
  series.points[3].fastest_us = 170;
  series.points[4].fastest_us = 139;
  series.points[4].slowest_us = 190;
  Explanation explanation = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  ASSERT_TRUE(has_transient(explanation)) << explanation.summary();
  EXPECT_NE(explanation.summary().find("M=140, the same kernel, took 130.0 µs in its median and 176.4 µs in its "
                                       "slowest sample at this M's work; M=130 took 170.0 µs in its fastest"),
            std::string::npos)
      << explanation.summary();
  // The neighbour never reached this M's time: no transient.
  series.points[4].slowest_us = 150;
  EXPECT_FALSE(has_transient(explain_anomaly(series, testing::anomaly_against(series, 3, 2))));
  // Another kernel beside it says nothing about this one's.
  series.points[4].slowest_us = 190;
  series.points[4].kernel_name = "gemm_b";
  EXPECT_FALSE(has_transient(explain_anomaly(series, testing::anomaly_against(series, 3, 2))));
  // Jitter: this M's fastest sample ran at the neighbour's median, so this M was not slower all through.
  series.points[4].kernel_name = "gemm_a";
  series.points[3].fastest_us = 131;
  explanation = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  EXPECT_FALSE(has_transient(explanation)) << explanation.summary();
  EXPECT_NE(explanation.summary().find("no transient beside it"), std::string::npos) << explanation.summary();
}

TEST(Explain, EmptierWavesAndALowerClockMayAccountForADropTogether) {
  // 16x128 tiles on 4 SMs: M = 120 fills 2 waves (8 tiles, 94% of their area holds output), M = 150 3 waves
  // 83% full (78% of the area): 16.7% fewer useful tile slots. M = 150 loses 40%: the waves alone account for
  // less than half of it, and so does its clock, 14% lower; together, 28.5%, they do.
  Series series = flat_series();
  series.multiprocessors = 4;
  for (SeriesPoint& point : series.points) {
    point.tile = TileShape{16, 128};
    point.sm_clock_mhz = 1980;
  }
  series.points[5].utils = 0.6;
  series.points[5].sm_clock_mhz = 1700;
  Explanation explanation = explain_anomaly(series, testing::anomaly_against(series, 5, 2));
  ASSERT_EQ(explanation.causes.size(), 1u) << explanation.summary();
  EXPECT_EQ(explanation.causes[0].kind, CauseKind::throttling);
  EXPECT_NE(explanation.causes[0].evidence.find("(14.1% slower) and waves 16.7% emptier"), std::string::npos)
      << explanation.causes[0].evidence;
  EXPECT_NE(explanation.causes[0].evidence.find("together 28.5% slower, 40.0% of the MFU lost"), std::string::npos)
      << explanation.causes[0].evidence;
  // A clock 1.5% lower: together 17.9%, less than half of 40%.
  series.points[5].sm_clock_mhz = 1950;
  explanation = explain_anomaly(series, testing::anomaly_against(series, 5, 2));
  EXPECT_FALSE(explanation.explained()) << explanation.summary();
}

bool has_power_cap(const Explanation& explanation) {
  return std::any_of(explanation.causes.begin(), explanation.causes.end(),
                     [](const Cause& cause) { return cause.kind == CauseKind::power_cap; });
}

// flat_series() at the board's 700 W limit for 5% of every point's time; M = 130 (index 3) dips 10% with the
// same kernel, tight samples and steady neighbours: what the clock readings at a point's ends cannot explain.
Series capped_dip_series() {
  Series series = flat_series();
  for (SeriesPoint& point : series.points) {
    point.power_capped_share = 0.05;
    point.power_limit_w = 700;
  }
  series.points[3].utils = 0.9;
  return series;
}

TEST(Explain, ADipHeldAtThePowerLimitLongerThanItsReferenceIsAPowerCap) {
  Series series = capped_dip_series();
  series.points[3].power_capped_share = 0.65;
  const Explanation explanation = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  ASSERT_TRUE(has_power_cap(explanation)) << explanation.summary();
  const std::string evidence = explanation.causes.back().evidence;
  EXPECT_NE(evidence.find("M=130 spent 65.0% of its time held down by the board's 700 W power limit, M=120 5.0%: "
                          "60.0% more of its time capped; its 10.0% drop needs those moments 17% slower"),
            std::string::npos)
      << evidence;
  // A share 8 points above the reference's, at half speed, is 4% of the time: less than half of the 10% drop.
  series.points[3].power_capped_share = 0.13;
  const Explanation small = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  EXPECT_FALSE(has_power_cap(small)) << small.summary();
  EXPECT_NE(small.summary().find("at the power limit 13% of its time vs 5% at M=120"), std::string::npos)
      << small.summary();
}

TEST(Explain, ADipWithoutPowerCapEvidenceOrWhoseReferenceWasEquallyCappedIsNoPowerCap) {
  Series series = capped_dip_series();  // the dip as capped as its reference
  Explanation explanation = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  EXPECT_FALSE(has_power_cap(explanation)) << explanation.summary();
  // Both held at the limit all through: the counters cannot tell the dip from its reference.
  for (SeriesPoint& point : series.points) point.power_capped_share = 1.0;
  explanation = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  EXPECT_FALSE(has_power_cap(explanation)) << explanation.summary();
  EXPECT_NE(explanation.summary().find("at the power limit 100% of its time vs 100% at M=120"), std::string::npos)
      << explanation.summary();
  // A share above all of the point's time: a counter refreshed in steps (NVML's cached field, every ~100 ms).
  series.points[3].power_capped_share = 7.0;
  series.points[2].power_capped_share = 0.0;
  explanation = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  EXPECT_FALSE(has_power_cap(explanation)) << explanation.summary();
  EXPECT_NE(explanation.summary().find("power-cap share 700% at M=130: the counter was not read up to date"),
            std::string::npos)
      << explanation.summary();
  // The reference recorded no accounting: nothing to compare with.
  series.points[3].power_capped_share = 0.9;
  series.points[2].power_capped_share.reset();
  explanation = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  EXPECT_FALSE(has_power_cap(explanation)) << explanation.summary();
  EXPECT_NE(explanation.summary().find("no power-cap accounting at M=120"), std::string::npos) << explanation.summary();
}

TEST(Explain, ProfilesWithoutThePowerCapColumnExplainAsBefore) {
  Series series = capped_dip_series();
  for (SeriesPoint& point : series.points) point.power_capped_share.reset();
  const Explanation explanation = explain_anomaly(series, testing::anomaly_against(series, 3, 2));
  EXPECT_EQ(explanation.summary(), "no supported cause: same kernel as M=120, SM count unknown, no spread recorded, "
                                   "not flagged as throttled, no transient beside it");
}

TEST(Explain, UnsupportedAnomalySaysSo) {
  Series series = wave_series();
  series.multiprocessors = 0;
  Anomaly anomaly;
  anomaly.index = 4;
  anomaly.m = 129;
  anomaly.reference_index = 3;
  anomaly.reference_m = 128;
  const Explanation explanation = explain_anomaly(series, anomaly);
  EXPECT_FALSE(explanation.explained());
  EXPECT_EQ(explanation.summary(), "no supported cause: same kernel as M=128, SM count unknown, no spread recorded, "
                                   "not flagged as throttled, no transient beside it");
  for (SeriesPoint& point : series.points) point.kernel_name.clear();
  EXPECT_NE(explain_anomaly(series, anomaly).summary().find("no kernel names recorded"), std::string::npos);
}

TEST(Explain, Rtx4090CliffAt3076IsAKernelSwitch) {
  const auto path = data_file(triage_testing::kRtx4090Torch251);
  const Series series = read_series_file(path.string(), {}).at(0);
  const std::vector<Anomaly> anomalies = noise_aware_anomalies(series, {});
  const auto at_3076 = std::find_if(anomalies.begin(), anomalies.end(), [](const Anomaly& a) { return a.m == 3076; });
  ASSERT_NE(at_3076, anomalies.end());
  const Explanation explanation = explain_anomaly(series, *at_3076);
  ASSERT_FALSE(explanation.causes.empty());
  EXPECT_EQ(explanation.causes[0].kind, CauseKind::kernel_switch);
  EXPECT_NE(explanation.causes[0].evidence.find("128x64"), std::string::npos) << explanation.causes[0].evidence;
  EXPECT_NE(explanation.causes[0].evidence.find("128x128"), std::string::npos) << explanation.causes[0].evidence;
}

TEST(Explain, StudyProfilesMostAnomaliesHaveACause) {
  // The study's profiles record the kernel the library picked; its anomalies
  // mostly sit where that choice changed or a wave boundary passed.
  const auto path = data_file(triage_testing::kRtx4090Torch251);
  const Series series = read_series_file(path.string(), {}).at(0);
  const std::vector<Anomaly> anomalies = low_utils_anomalies(series, 0.85);
  std::size_t explained = 0;
  for (const Explanation& explanation : explain_anomalies(series, anomalies)) explained += explanation.explained();
  EXPECT_GT(explained, anomalies.size() / 2) << explained << " of " << anomalies.size();
}

// `series` (N = K = 2880) with points at M = 80, 88 and 96, each measured as `measure` says.
Series points_80_88_96(Series series, const std::function<void(SeriesPoint&)>& measure) {
  series.n = 2880;
  series.k = 2880;
  for (const int64_t m : {80, 88, 96}) {
    SeriesPoint point;
    point.m = m;
    measure(point);
    series.points.push_back(point);
  }
  return series;
}

// A grouped profile: M = 88 and M = 96 ran the same kernel (16-row tiles) for the same time; `useful` rows of
// tokens landed on this GPU's experts at M = 96, of `executed` rows the kernel computed, its busiest expert
// with `busiest` rows.
Series grouped_series(int64_t useful, int64_t executed, int64_t busiest) {
  Series series;
  series.grouped = GroupedSeriesInfo{};
  return points_80_88_96(std::move(series), [&](SeriesPoint& point) {
    point.kernel_name = "a16w4_blockscale_grouped/mma16816_m16n128k128_wk1_split1_slots16";
    point.time_us = 90;
    point.useful_rows = point.m == 96 ? useful : 45;
    point.executed_rows = point.m == 96 ? executed : 128;
    point.busiest_expert_rows = point.m == 96 ? busiest : 14;
    point.utils = static_cast<double>(point.useful_rows) / 1000;
  });
}

std::optional<Cause> cause_of_kind(const Explanation& explanation, CauseKind kind) {
  for (const Cause& cause : explanation.causes)
    if (cause.kind == kind) return cause;
  return std::nullopt;
}

TEST(Explain, FewerTokensForTheSameComputedRowsAreExpertRows) {
  const Series series = grouped_series(33, 128, 14);  // 33 of 128 rows held tokens vs 45 of 128: −26.7%
  const Explanation explanation = explain_anomaly(series, testing::anomaly_against(series, 2, 1));
  const std::optional<Cause> cause = cause_of_kind(explanation, CauseKind::expert_rows);
  ASSERT_TRUE(cause) << explanation.summary();
  EXPECT_NE(cause->evidence.find("M=96 put 33 rows of tokens on this GPU's experts, of 128 rows the kernel computed "
                                 "(25.8%); M=88: 45 of 128 (35.2%): 26.7% less MFU predicted"),
            std::string::npos)
      << cause->evidence;
  // The same drop where the kernel computed fewer rows in proportion to the tokens: no cause.
  const Series proportional = grouped_series(33, 94, 14);
  const Explanation none = explain_anomaly(proportional, testing::anomaly_against(proportional, 2, 1));
  EXPECT_FALSE(cause_of_kind(none, CauseKind::expert_rows)) << none.summary();
}

TEST(Explain, BusiestExpertWithMoreTileRowsIsExpertRows) {
  // 44 of 144 computed rows held tokens vs 45 of 128 (−13%, short of half the drop's −40% made up below), but the
  // busiest expert's 18 rows take ⌈18/16⌉ = 2 tile rows against 1: half the MFU predicted.
  Series series = grouped_series(44, 144, 18);
  series.points[2].time_us = 150;
  series.points[2].utils = 44.0 / 1000 * 90 / 150;
  const Explanation explanation = explain_anomaly(series, testing::anomaly_against(series, 2, 1));
  const std::optional<Cause> cause = cause_of_kind(explanation, CauseKind::expert_rows);
  ASSERT_TRUE(cause) << explanation.summary();
  EXPECT_NE(cause->evidence.find("the busiest expert got 18 rows at M=96: ⌈18/16⌉ = 2 tile rows"), std::string::npos)
      << cause->evidence;
  // With 16 rows it fits one tile row, as at the reference: no cause.
  series.points[2].busiest_expert_rows = 16;
  const Explanation none = explain_anomaly(series, testing::anomaly_against(series, 2, 1));
  EXPECT_FALSE(cause_of_kind(none, CauseKind::expert_rows)) << none.summary();
}

// Two M of a kernel on an H100 (989.4 TFLOP/s bf16, 3.35 TB/s: ridge 295 flop per byte): M = 88 did 5 TFLOP/s at
// 1500 GB/s of its fewest bytes, M = 96 `tflops` at `gbytes` GB/s.
Series intensity_series(double tflops, double gbytes) {
  Series series;
  series.device = "NVIDIA H100 80GB HBM3";
  series.peak_tflops = 989.4;
  return points_80_88_96(std::move(series), [&](SeriesPoint& point) {
    point.kernel_name = "grouped_loop";
    point.time_us = 160;
    point.tflops = point.m == 96 ? tflops : 5;
    point.gbytes_per_s = point.m == 96 ? gbytes : 1500;
    point.utils = point.tflops / 989.4;
  });
}

TEST(Explain, FewerFlopsPerByteBelowTheRidgeIsACause) {
  // 3.7 TFLOP/s at 1500 GB/s is 2.47 flop per byte, 5 at 1500 GB/s 3.33: 26% less MFU, all of the drop.
  const Series series = intensity_series(3.7, 1500);
  const Explanation explanation = explain_anomaly(series, testing::anomaly_against(series, 2, 1));
  const std::optional<Cause> cause = cause_of_kind(explanation, CauseKind::intensity);
  ASSERT_TRUE(cause) << explanation.summary();
  EXPECT_NE(cause->evidence.find("M=96 did 2.47 flop per byte it must move, M=88 3.33, both below the ridge of 295"),
            std::string::npos)
      << cause->evidence;
  // The same drop at a lower bandwidth (1110 GB/s): the flops per byte held, the bytes moved slower: no cause.
  const Series slower = intensity_series(3.7, 1110);
  const Explanation none = explain_anomaly(slower, testing::anomaly_against(slower, 2, 1));
  EXPECT_FALSE(cause_of_kind(none, CauseKind::intensity)) << none.summary();
  // Above the ridge the roofline bounds time by compute: fewer flops per byte say nothing.
  // (370 TFLOP/s at 1 GB/s vs 500: 26% fewer flops per byte, far above the ridge.)
  Series compute_bound = intensity_series(370, 1);
  compute_bound.points[1].tflops = 500;
  compute_bound.points[1].gbytes_per_s = 1;
  compute_bound.points[1].utils = 500 / compute_bound.peak_tflops;
  const Explanation bound = explain_anomaly(compute_bound, testing::anomaly_against(compute_bound, 2, 1));
  EXPECT_FALSE(cause_of_kind(bound, CauseKind::intensity)) << bound.summary();
}

}  // namespace
}  // namespace shapescope::analyze
