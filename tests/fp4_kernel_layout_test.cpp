// Host-side facts of the FP4 and Blackwell kernels, checked on the CPU: the W4A16 weight layout (every element of
// a lane's word once, in the order the dequantization takes it), the W4A16 heuristic, cuBLASLt's one-byte scale
// layout, and the compute-capability line a sweep stops with.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <set>
#include <string>

#include "kernels/compute_capability.hpp"
#include "kernels/cuda/a16w4_blockscale_config.hpp"
#include "kernels/cuda/a16w4_layout.hpp"
#include "kernels/cuda/cublaslt_scale_layout.hpp"

namespace shapescope::kernels::cuda {
namespace {

// Every bit of a word belongs to one element, and the dequantization's pair p is exactly elements 2p and 2p+1
// as bf16 (sign on bit 15, the three magnitude bits on bits 8..6 of each half), whatever the other six hold.
TEST(Fp4KernelLayout, EveryElementOfAWordDequantizesAloneIntoItsPair) {
  uint32_t covered = 0;
  for (int j = 0; j < 8; ++j) {
    const uint32_t bits = a16w4_place_e2m1(0xF, j);
    EXPECT_EQ(std::popcount(bits), 4) << "element " << j;
    EXPECT_EQ(covered & bits, 0u) << "element " << j;
    covered |= bits;
  }
  EXPECT_EQ(covered, 0xFFFFFFFFu);
  const auto pair = [](uint32_t word, int p) {
    switch (p) {
      case 0: return a16w4_e2m1_pair<0>(word);
      case 1: return a16w4_e2m1_pair<1>(word);
      case 2: return a16w4_e2m1_pair<2>(word);
      default: return a16w4_e2m1_pair<3>(word);
    }
  };
  uint32_t others = 0x9E3779B9u;  // the other elements: a fixed pseudo-random stream
  for (int j = 0; j < 8; ++j)
    for (uint32_t code = 0; code < 16; ++code) {
      others = others * 1664525u + 1013904223u;
      uint32_t word = a16w4_place_e2m1(code, j);
      for (int other = 0; other < 8; ++other)
        if (other != j) word |= a16w4_place_e2m1(others >> (4 * other) & 0xF, other);
      const uint32_t half = pair(word, j / 2) >> (16 * (j % 2)) & 0xFFFF;
      EXPECT_EQ(half, (code >> 3) << 15 | (code & 7) << 6) << "element " << j << " code " << code;
    }
}

TEST(Fp4KernelLayout, LayoutSizesCoverPartialTilesAndChunks) {
  const A16w4Layout mx = A16w4Layout::of(129, 258, 32);  // 5 warp tiles of 32 columns, 3 chunks of 128
  EXPECT_EQ(mx.warp_tiles, 5);
  EXPECT_EQ(mx.chunks, 3);
  EXPECT_EQ(mx.weight_words(), 5 * 3 * kA16w4TilesPerWarp * 128);
  EXPECT_EQ(mx.scale_words(), 5 * 3 * kA16w4TilesPerWarp * 8);
  EXPECT_EQ(A16w4Layout::of(129, 258, 16).scale_words(), 2 * mx.scale_words());
  EXPECT_EQ(mx.weight_word(1, 2, 3) - mx.weight_word(1, 2, 2), kA16w4WordsPerTileChunk);
  EXPECT_EQ(mx.weight_word(2, 0, 0) - mx.weight_word(1, 0, 0), 3 * kA16w4TilesPerWarp * kA16w4WordsPerTileChunk);
}

// The heuristic takes the cheapest (warps_k, split_k) of its estimate: Llama-3.3-70B qkv at TP1, which filled 1.2
// waves with the old rule, runs in one; narrow N splits K across CTAs, within one wave; K too short for four
// warps keeps its warps busy.
TEST(Fp4KernelLayout, HeuristicTakesTheCheapestSplitAndAvoidsPartialWaves) {
  constexpr int kSms = 132;
  const auto tiles = [](int64_t m, int64_t n) {
    const int64_t rows = m <= 8 ? 8 : 16;
    return (m + rows - 1) / rows * ((n + kA16w4WarpN - 1) / kA16w4WarpN);
  };
  const auto config = [&](int64_t m, int64_t n, int64_t k) {
    return choose_a16w4_config(m, tiles(m, n), (k + kA16w4ChunkK - 1) / kA16w4ChunkK, kSms);
  };
  const auto ctas = [](const A16w4Config& c, int64_t warp_tiles) {
    return (warp_tiles + c.warps_n - 1) / c.warps_n * c.split_k;
  };
  const int64_t resident = a16w4_resident_ctas(kSms);
  EXPECT_EQ(resident, kSms * kA16w4WarpsPerSm / kA16w4Warps);
  for (const int64_t n : {57344, 10240, 8192, 2560}) {
    const A16w4Config chosen = config(1, n, 8192);
    EXPECT_EQ(chosen.rows, 8);
    EXPECT_EQ(chosen.warps_n * chosen.warps_k, kA16w4Warps);
    for (const int warps_k : {1, 2, 4})
      for (int split_k = 1; split_k <= 64 / warps_k; ++split_k)
        EXPECT_LE(a16w4_time(chosen, tiles(1, n), 64, kSms, resident),
                  a16w4_time(A16w4Config{8, kA16w4Warps / warps_k, warps_k, split_k}, tiles(1, n), 64, kSms, resident))
            << "N " << n << " warps_k " << warps_k << " split_k " << split_k;
  }
  EXPECT_LE(ctas(config(1, 10240, 8192), 320), resident);  // qkv at TP1: 320 warp tiles
  const A16w4Config narrow = config(16, 2560, 8192);        // qkv at TP4: 80 warp tiles
  EXPECT_EQ(narrow.rows, 16);
  EXPECT_GT(narrow.split_k, 1);
  EXPECT_LE(ctas(narrow, 80), resident);
  const A16w4Config shallow = config(1, 8, 256);  // 2 chunks
  EXPECT_EQ(shallow.split_k, 1);
  EXPECT_LE(shallow.warps_k, 2);
  EXPECT_EQ(shallow.warps_n * shallow.warps_k, kA16w4Warps);
}

// A spec of `multiprocessors` SMs on which `clusters(split)` clusters of each split 2..8 are resident at once.
template <class Clusters>
A16w4DeviceSpec spec_with(int multiprocessors, const Clusters& clusters) {
  A16w4DeviceSpec spec{multiprocessors, {}};
  for (int split = 2; split <= kA16w4MostClusterSplits; ++split)
    spec.clusters_by_split[std::size_t(split)] = clusters(split);
  return spec;
}

// The dense kernel keeps the heuristic's configuration and sums its K splits in a thread-block cluster exactly
// when whole clusters keep the grid in as many waves as a grid without clusters (4 CTAs an SM): here each GPC
// of 15 SMs (60 CTA slots) fits floor(60 / split) clusters, so clusters of 8 leave 4 slots empty; splits other
// than 2, 4 and 8, or a split with no figure, go through the workspace. The name and cluster extent say which.
TEST(Fp4KernelLayout, DenseSplitsSumInAClusterOnlyWhereItKeepsTheWaves) {
  constexpr int kGpcs = 8, kSmsPerGpc = 15, kSms = kGpcs * kSmsPerGpc;
  const A16w4DeviceSpec spec =
      spec_with(kSms, [](int split) { return kGpcs * (kSmsPerGpc * kA16w4WarpsPerSm / kA16w4Warps / split); });
  const A16w4DeviceSpec unknown{kSms, {}};
  const int64_t resident = a16w4_resident_ctas(kSms);
  const auto waves = [](int64_t ctas, int64_t at_once) { return (ctas + at_once - 1) / at_once; };
  std::set<int> clustered, through_workspace;
  int kept_off = 0;
  for (const int64_t m : {1, 16})
    for (const int64_t warp_tiles : {1, 2, 8, 40, 58, 80, 100, 160, 256, 320, 1792})
      for (const int64_t chunks : {1, 2, 16, 23, 56, 64, 224}) {
        const A16w4Config plain = choose_a16w4_config(m, warp_tiles, chunks, kSms);
        const A16w4Config dense = choose_a16w4_dense_config(m, warp_tiles, chunks, spec, false);
        const std::string where = std::to_string(warp_tiles) + " warp tiles, " + std::to_string(chunks) + " chunks";
        EXPECT_EQ(dense.rows, plain.rows);
        EXPECT_EQ(dense.warps_k, plain.warps_k);
        EXPECT_EQ(dense.warps_n, plain.warps_n);
        EXPECT_EQ(dense.split_k, plain.split_k);
        EXPECT_FALSE(plain.cluster_sum);
        EXPECT_FALSE(choose_a16w4_dense_config(m, warp_tiles, chunks, unknown, false).cluster_sum) << where;
        const int64_t ctas = (warp_tiles + dense.warps_n - 1) / dense.warps_n * dense.split_k;
        const bool fits = dense.split_k >= 2 && dense.split_k <= kA16w4MostClusterSplits &&
                          std::has_single_bit(uint64_t(dense.split_k));
        const bool same_waves =
            fits && waves(ctas, spec.fitting_clusters(dense.split_k) * dense.split_k) == waves(ctas, resident);
        EXPECT_EQ(dense.cluster_sum, same_waves) << where << ", split " << dense.split_k;
        kept_off += fits && !same_waves;
        EXPECT_EQ(dense.cluster_k(), dense.cluster_sum ? dense.split_k : 1);
        EXPECT_EQ(describe(dense).ends_with("_cluster"), dense.cluster_sum) << describe(dense);
        (dense.cluster_sum ? clustered : through_workspace).insert(dense.split_k);
      }
  EXPECT_FALSE(clustered.empty());
  EXPECT_GT(kept_off, 0) << "no shape where the cluster would cost a wave";
  EXPECT_TRUE(std::any_of(through_workspace.begin(), through_workspace.end(),
                          [](int split_k) { return split_k > kA16w4MostClusterSplits; }));
}

// M = 1 over 40 warp tiles x 64 chunks: the heuristic's 8 splits of one warp tile a CTA, 320 CTAs, one wave of
// the 528 that 132 SMs keep. Clusters of 8 take them in one wave while 40 fit at once; at 39 (312 CTAs), or 10,
// the cluster would cost a second wave and the workspace sums them. Six splits (Llama-3.3-70B qkv at TP4, M = 4:
// 80 warp tiles x 64 chunks, 480 CTAs) always go through the workspace.
TEST(Fp4KernelLayout, DenseClusterOfEightIsPricedByTheClustersResident) {
  constexpr int kSms = 132;
  const auto with_eight = [&](int clusters) {
    return choose_a16w4_dense_config(1, 40, 64, spec_with(kSms, [&](int split) { return split == 8 ? clusters : 0; }));
  };
  const A16w4Config all = with_eight(66);
  ASSERT_EQ(all.split_k, 8);
  ASSERT_EQ((40 + all.warps_n - 1) / all.warps_n * all.split_k, 320);
  EXPECT_TRUE(all.cluster_sum);
  EXPECT_TRUE(with_eight(40).cluster_sum);
  EXPECT_FALSE(with_eight(39).cluster_sum);
  EXPECT_FALSE(with_eight(10).cluster_sum);
  EXPECT_FALSE(with_eight(0).cluster_sum);
  EXPECT_EQ(describe(with_eight(40)), "mma16816_m8n32k128_wk4_stages4_split8_cluster");
  EXPECT_EQ(describe(with_eight(39)), "mma16816_m8n32k128_wk4_stages4_split8");
  const A16w4Config six = choose_a16w4_dense_config(4, 80, 64, spec_with(kSms, [](int) { return 88; }));
  ASSERT_EQ(six.split_k, 6);
  EXPECT_FALSE(six.cluster_sum);
}

// The persistent grid: every resident warp (or one a unit) walks an even share of the units, priced as its
// longest run, one ring start and one exposed workspace sum unless every run is whole tiles. Llama-3.3-70B
// gate_up at TP1 (1792 warp tiles x 64 chunks: 54.3 units a warp, 55 the longest; the other grid 3584 CTAs in
// 7 waves) takes it; gate_up at TP2 (896 x 64) prices lower too but the other grid runs in one wave of 448 CTAs,
// and keeps it; down at TP1 (256 x 224: 27.2 units a warp against 28) prices the same and keeps the cluster
// sum; over two tiles of rows, or forced off, it is never taken; forced on, always.
TEST(Fp4KernelLayout, PersistentGridTakesEvenRunsWhereTheyPriceLower) {
  constexpr int kSms = 132;
  const int64_t warps = a16w4_resident_ctas(kSms) * kA16w4Warps;
  EXPECT_EQ(a16w4_run_warps(1792 * 64, kSms), warps);
  EXPECT_EQ(a16w4_run_warps(21, kSms), 21);
  EXPECT_DOUBLE_EQ(a16w4_run_time(1792 * 64, 64, kSms), 55.0 + kA16w4WaveStartCost + kA16w4SplitCost);
  EXPECT_DOUBLE_EQ(a16w4_run_time(warps * 2, 1, kSms), 2.0 + kA16w4WaveStartCost);  // two whole tiles a warp
  EXPECT_DOUBLE_EQ(a16w4_run_time(21, 3, kSms), 1.0 + kA16w4WaveStartCost + kA16w4SplitCost);
  const A16w4DeviceSpec spec = spec_with(kSms, [](int split) { return 528 / split; });
  const A16w4Config gate_up = choose_a16w4_dense_config(1, 1792, 64, spec);
  EXPECT_EQ(gate_up.run_warps, warps);
  EXPECT_EQ(gate_up.rows, 8);
  EXPECT_EQ(gate_up.tile_n(), kA16w4WarpN);
  EXPECT_EQ(describe(gate_up), "mma16816_m8n32k128_stages4_runs" + std::to_string(warps));
  EXPECT_LT(a16w4_run_time(1792 * 64, 64, kSms),
            a16w4_time(choose_a16w4_config(1, 1792, 64, kSms), 1792, 64, kSms, a16w4_resident_ctas(kSms)));
  EXPECT_EQ(choose_a16w4_dense_config(16, 1792, 64, spec).rows, 16);
  EXPECT_GT(choose_a16w4_dense_config(16, 1792, 64, spec).run_warps, 0);
  EXPECT_EQ(choose_a16w4_dense_config(17, 2 * 1792, 64, spec).run_warps, 0);
  const A16w4Config gate_up_tp2 = choose_a16w4_dense_config(1, 896, 64, spec);
  EXPECT_LT(a16w4_run_time(896 * 64, 64, kSms),
            a16w4_time(gate_up_tp2, 896, 64, kSms, a16w4_resident_ctas(kSms)));
  EXPECT_EQ(gate_up_tp2.run_warps, 0);
  EXPECT_LE((896 + gate_up_tp2.warps_n - 1) / gate_up_tp2.warps_n * gate_up_tp2.split_k, a16w4_resident_ctas(kSms));
  EXPECT_EQ(choose_a16w4_dense_config(1, 896, 64, spec, true).run_warps, warps);
  EXPECT_EQ(choose_a16w4_dense_config(1, 1792, 64, spec, false).run_warps, 0);
  const A16w4Config down = choose_a16w4_dense_config(1, 256, 224, spec);
  EXPECT_EQ(down.run_warps, 0);
  EXPECT_TRUE(down.cluster_sum);
  EXPECT_EQ(choose_a16w4_dense_config(1, 256, 224, spec, true).run_warps, warps);
  EXPECT_EQ(choose_a16w4_dense_config(1, 7, 3, spec, true).run_warps, 21);
}

// cuBLAS docs' 1D block-scaling layout: tiles of 128 rows x 4 K blocks, 512 bytes, K blocks of a row block
// consecutive; inside, row r at (r % 32) * 16 + (r / 32) * 4.
// The dense kernel streams at decode sizes and dequantizes past one crossover M, which falls earlier on a GPU
// with less bandwidth per FLOP (the H200's 206 FLOP/byte against the H100's 295) and never flips back.
TEST(Fp4KernelLayout, DequantizingPathStartsAtOneCrossoverPastDecode) {
  const auto crossover = [](double flops_per_byte) {
    int64_t first = 0;
    for (int64_t m = 1; m <= 8192; ++m) {
      const bool dequantizes = cuda::a16w4_dequantizes(m, flops_per_byte);
      if (dequantizes && first == 0) first = m;
      if (first != 0) {
        EXPECT_TRUE(dequantizes) << "M=" << m << " after the crossover at " << first;
      }
    }
    return first;
  };
  const int64_t h100 = crossover(989.4 / 3.35), h200 = crossover(989.4 / 4.8);
  EXPECT_GT(h100, 64);  // decode sizes keep the streaming kernel
  EXPECT_LT(h100, 256);
  EXPECT_LT(h200, h100);
}

TEST(Fp4KernelLayout, CublasLtVecScalesFollowTheTiledLayout) {
  EXPECT_EQ(cublaslt_vec_scale_offset(0, 0, 7), 0);
  EXPECT_EQ(cublaslt_vec_scale_offset(0, 3, 7), 3);
  EXPECT_EQ(cublaslt_vec_scale_offset(1, 0, 7), 16);
  EXPECT_EQ(cublaslt_vec_scale_offset(32, 0, 7), 4);
  EXPECT_EQ(cublaslt_vec_scale_offset(127, 3, 7), 31 * 16 + 3 * 4 + 3);
  EXPECT_EQ(cublaslt_vec_scale_offset(0, 4, 7), 512);
  EXPECT_EQ(cublaslt_vec_scale_offset(128, 0, 7), 2 * 512);
  EXPECT_EQ(cublaslt_vec_scale_bytes(200, 7), 256 * 8);
  std::set<int64_t> offsets;  // every scale of a padded 200 x 7 operand in its own byte, inside the allocation
  for (int64_t row = 0; row < 200; ++row)
    for (int64_t kb = 0; kb < 7; ++kb) {
      const int64_t offset = cublaslt_vec_scale_offset(row, kb, 7);
      EXPECT_LT(offset, cublaslt_vec_scale_bytes(200, 7));
      offsets.insert(offset);
    }
  EXPECT_EQ(offsets.size(), 200u * 7u);
}

TEST(Fp4KernelLayout, OlderGpusGetOneLineNamingTheCapability) {
  const auto problem = compute_capability_problem("cublaslt_nvfp4", 10, "NVIDIA H100 80GB HBM3", 9, 0);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(*problem,
            "cublaslt_nvfp4 needs a GPU of compute capability 10.0 or newer; NVIDIA H100 80GB HBM3 is 9.0: drop "
            "--kernel cublaslt_nvfp4 or run on such a GPU");
  EXPECT_EQ(problem->find('\n'), std::string::npos);
  EXPECT_FALSE(compute_capability_problem("cublaslt_nvfp4", 10, "NVIDIA B200", 10, 0).has_value());
  EXPECT_FALSE(compute_capability_problem("cublaslt_mxfp8", 10, "NVIDIA RTX PRO 6000", 12, 0).has_value());
}

}  // namespace
}  // namespace shapescope::kernels::cuda
