// The heuristic and the weight layout of the tiled W4A16 kernels (a16w4_tiled_config.hpp), host code only, on the
// H100's 132 SMs and a made-up GPU of 80.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "kernels/fp4_e2m1.hpp"
#include "kernels/fp8_e4m3.hpp"

#include "kernels/cuda/a16w4_tiled_config.hpp"

namespace shapescope::kernels::cuda {
namespace {

int64_t tiles(int64_t m, int block_m) { return (m + block_m - 1) / block_m; }

A16w4TiledConfig choose(int64_t m, int64_t n, int64_t k, int multiprocessors) {
  const A16w4TiledLayout layout = A16w4TiledLayout::of(n, k, 32);
  return choose_a16w4_tiled_config(tiles(m, 128), tiles(m, 64), tiles(m, 32), layout.n_tiles, layout.k_steps,
                                   multiprocessors);
}

TEST(A16w4TiledConfig, EveryTokenTileFitsAnSm) {
  // 228 KiB of shared memory per H100 SM, 1 KiB of it reserved per CTA (and the barriers, under 1 KiB more).
  for (const int block_m : {32, 64, 128}) {
    A16w4TiledConfig config;
    config.block_m = block_m;
    EXPECT_LE(config.shared_bytes() + 2048, 228 * 1024) << describe(config);
  }
}

TEST(A16w4TiledConfig, TokenTileFollowsMAndSmallMSplitsK) {
  for (const int sms : {132, 80}) {
    // M within 32: 32-token tiles, K split until the CTAs fill the SMs once at most.
    const A16w4TiledConfig small = choose(32, 5120, 8192, sms);
    EXPECT_EQ(small.block_m, 32);
    EXPECT_GT(small.split_k, 1);
    EXPECT_LE(40 * small.split_k, sms);
    EXPECT_GT(40 * small.split_k * 2, sms) << "could split further";
    // Every split walks at least the minimum and none is empty.
    EXPECT_GE(small.steps_per_split, kA16w4TiledMinStepsPerSplit);
    EXPECT_EQ(small.split_k, (128 + small.steps_per_split - 1) / small.steps_per_split);
    // Past 32 rows a tile: 64-token tiles with K split walk half the steps of 32-token ones with K whole.
    EXPECT_EQ(choose(33, 5120, 8192, sms).block_m, 64);
    // Many waves of tiles: tall tiles, K whole.
    const A16w4TiledConfig large = choose(1024, 28672, 8192, sms);
    EXPECT_EQ(large.block_m, 128);
    EXPECT_EQ(large.split_k, 1);
  }
  // Each M within a shorter tile: the shortest, as many tiles for a cheaper step.
  EXPECT_EQ(choose(16, 28672, 8192, 132).block_m, 32);
  EXPECT_EQ(choose(64, 28672, 8192, 132).block_m, 64);
  EXPECT_EQ(choose(65, 28672, 8192, 132).block_m, 128);
  // Fewer waves outweigh a dearer step: 80 128-token tiles in one wave, not 160 64-token ones in two; but one
  // wave of 64-token tiles stays, and so does a split K.
  EXPECT_EQ(choose(128, 5120, 8192, 132).block_m, 64);
  EXPECT_EQ(choose(128, 5120, 8192, 132).split_k, 1);
  EXPECT_EQ(describe(choose(64, 5120, 8192, 132)), "wgmma_rs_w128t64k64_stages6_split2");
  EXPECT_EQ(choose(256, 5120, 8192, 132).block_m, 128);
  // Grouped: row tiles summed over groups (here four groups of 33-64 rows).
  EXPECT_EQ(choose_a16w4_tiled_config(4, 4, 8, 56, 32, 132).block_m, 64);
  // A short K is never split below the minimum steps.
  EXPECT_EQ(choose(1, 128, 256, 132).split_k, 1);
  EXPECT_EQ(describe(choose(1024, 28672, 8192, 132)), "wgmma_rs_w128t128k64_stages6_split1");
}

TEST(A16w4TiledConfig, LayoutPadsNToTilesAndKToSteps) {
  const A16w4TiledLayout nvfp4 = A16w4TiledLayout::of(129, 100, 16);
  EXPECT_EQ(nvfp4.n_tiles, 2);
  EXPECT_EQ(nvfp4.k_steps, 2);
  EXPECT_EQ(nvfp4.scale_bytes_per_row, 8);  // four bf16 scales
  EXPECT_EQ(nvfp4.code_bytes(), 2 * 2 * 128 * 32);
  EXPECT_EQ(nvfp4.scale_bytes(), 2 * 2 * 128 * 8);
  EXPECT_EQ(nvfp4.code_offset(1, 1), 3 * 4096);
  EXPECT_EQ(nvfp4.scale_offset(1, 0), 2 * 1024);
  EXPECT_EQ(A16w4TiledLayout::of(4096, 7168, 32).scale_step_bytes(), 512);
}

float bf16_value(uint32_t bits) {
  const uint32_t wide = bits << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// Every pair of e2m1 codes in every pair slot of a code word, the other slots holding other codes, comes back as
// the two codes' values times 2^-126 (sign included, -0 as -0), and no slot's bits leak into another's.
TEST(A16w4TiledConfig, CodeWordGivesEveryCodePairExactly) {
  for (int pair = 0; pair < 4; ++pair)
    for (int low = 0; low < 16; ++low)
      for (int high = 0; high < 16; ++high) {
        uint8_t codes[8];
        for (int e = 0; e < 8; ++e) codes[e] = uint8_t((low * 7 + high * 3 + e * 5) % 16);
        codes[2 * pair] = uint8_t(low);
        codes[2 * pair + 1] = uint8_t(high);
        const uint32_t word = a16w4_tiled_code_word(codes);
        for (int j = 0; j < 4; ++j) {
          const uint32_t bits = a16w4_tiled_code_pair(word, j);
          for (int half = 0; half < 2; ++half) {
            const uint8_t code = codes[2 * j + half];
            const float value = std::ldexp(bf16_value(half ? bits >> 16 : bits & 0xFFFFu), 126);
            EXPECT_EQ(value, decode_e2m1(code)) << "pair " << j << " code " << int(code);
            EXPECT_EQ(std::signbit(value), (code & 0x8) != 0) << "pair " << j << " code " << int(code);
          }
        }
      }
}

// Every finite ue4m3 code (subnormals and zero included) comes out as its value x 2^117, every e8m0 code but 255
// as 2^(code - 127), exactly.
TEST(A16w4TiledConfig, ScaleBitsHoldEveryScaleCodeExactly) {
  for (uint32_t code = 0; code < 0x7F; ++code)
    EXPECT_EQ(bf16_value(a16w4_tiled_scale_bits(code, false)), std::ldexp(decode_e4m3(uint8_t(code)), 117))
        << "ue4m3 code " << code;
  for (uint32_t code = 0; code < 255; ++code)
    EXPECT_EQ(bf16_value(a16w4_tiled_scale_bits(code, true)), std::ldexp(1.0f, int(code) - 127))
        << "e8m0 code " << code;
}

}  // namespace
}  // namespace shapescope::kernels::cuda
