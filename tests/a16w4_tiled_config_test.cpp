// The heuristic and the weight layout of the tiled W4A16 kernels (a16w4_tiled_config.hpp), host code only, on the
// H100's 132 SMs and a made-up GPU of 80.
#include <gtest/gtest.h>

#include <string>

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
    // Past 32 rows a tile, too few 128-token tiles to fill the SMs: 64-token tiles.
    EXPECT_EQ(choose(33, 5120, 8192, sms).block_m, 64);
    // Enough 128-token tiles to fill the SMs: tall tiles, K whole.
    const A16w4TiledConfig large = choose(1024, 28672, 8192, sms);
    EXPECT_EQ(large.block_m, 128);
    EXPECT_EQ(large.split_k, 1);
  }
  // A short K is never split below the minimum steps.
  EXPECT_EQ(choose(1, 128, 256, 132).split_k, 1);
  EXPECT_EQ(describe(choose(1024, 28672, 8192, 132)), "wgmma_rs_w128t128k64_stages6_split1");
}

TEST(A16w4TiledConfig, LayoutPadsNToTilesAndKToSteps) {
  const A16w4TiledLayout nvfp4 = A16w4TiledLayout::of(129, 100, 16);
  EXPECT_EQ(nvfp4.n_tiles, 2);
  EXPECT_EQ(nvfp4.k_steps, 2);
  EXPECT_EQ(nvfp4.scale_bytes_per_row, 4);
  EXPECT_EQ(nvfp4.code_bytes(), 2 * 2 * 128 * 32);
  EXPECT_EQ(nvfp4.scale_bytes(), 2 * 2 * 128 * 4);
  EXPECT_EQ(nvfp4.code_offset(1, 1), 3 * 4096);
  EXPECT_EQ(nvfp4.scale_offset(1, 0), 2 * 512);
  EXPECT_EQ(A16w4TiledLayout::of(4096, 7168, 32).scale_step_bytes(), 256);
}

}  // namespace
}  // namespace shapescope::kernels::cuda
