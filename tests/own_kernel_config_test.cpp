// The per-shape heuristics of our CUDA kernels (pure host code, so they run in CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "kernels/cuda/a16w8_blockscale_config.hpp"
#include "kernels/cuda/fp8_blockscale_config.hpp"

namespace shapescope::kernels::cuda {
namespace {

constexpr int kH100Sms = 132;

struct WeightCase {
  int64_t n, k;
};
const WeightCase kDeepSeekTp8[] = {{3072, 1536}, {4096, 512}, {7168, 2048}, {2112, 7168},
                                   {4608, 7168}, {7168, 2304}, {512, 7168}, {7168, 256}};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

TEST(Fp8BlockscaleConfig, SplitsCoverEveryKBlockOnceAndNoneIsEmpty) {
  for (const WeightCase& w : kDeepSeekTp8) {
    for (const int64_t m : {1, 4, 64, 65, 128, 1024, 4097}) {
      const Fp8BlockscaleConfig config = choose_fp8_blockscale_config(GemmShape{m, w.n, w.k, 1}, kH100Sms);
      const int64_t kblocks = ceil_div(w.k, 128);
      SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(w.n) + " K=" + std::to_string(w.k));
      EXPECT_GE(int64_t(config.split_k) * config.kblocks_per_split, kblocks);
      EXPECT_LT(int64_t(config.split_k - 1) * config.kblocks_per_split, kblocks);  // the last split has work
      EXPECT_GE(config.split_k, 1);
      EXPECT_LE(config.split_k, kFp8MaxSplit);  // a portable cluster
    }
  }
}

TEST(Fp8BlockscaleConfig, GridIsWholeClustersOnePerSmAndSplitsOnlyAnUnfilledGrid) {
  for (const WeightCase& w : kDeepSeekTp8) {
    for (const int64_t m : {1, 16, 64, 128, 256, 512, 1024, 4096}) {
      const Fp8BlockscaleConfig config = choose_fp8_blockscale_config(GemmShape{m, w.n, w.k, 1}, kH100Sms);
      SCOPED_TRACE("M=" + std::to_string(m) + " N=" + std::to_string(w.n) + " K=" + std::to_string(w.k) + " " +
                   describe(config));
      const int64_t tiles = ceil_div(m, config.block_m()) * ceil_div(w.n, config.block_n);
      EXPECT_TRUE(fp8_config_compiled(config));
      EXPECT_LE(config.ctas, kH100Sms);
      EXPECT_EQ(config.ctas % config.split_k, 0);
      EXPECT_LE(config.ctas, tiles * config.split_k);
      if (tiles >= kH100Sms) {
        EXPECT_EQ(config.split_k, 1) << "every SM already has a tile";
      }
    }
  }
}

// What the H100 measurements behind the cost model showed (docs/KERNEL_NOTES.md, session 2).
TEST(Fp8BlockscaleConfig, SplitsAndTilesWhereMeasurementsSaidTheyPay) {
  const auto config_at = [](int64_t m, int64_t n, int64_t k) {
    return choose_fp8_blockscale_config(GemmShape{m, n, k, 1}, kH100Sms);
  };
  EXPECT_EQ(config_at(1, 7168, 256).split_k, 1);    // two K blocks: nothing to split
  EXPECT_EQ(config_at(1, 7168, 2048).split_k, 1);   // 56 tiles: split 1 ran 12.1 us, split 2 14.7 us
  EXPECT_EQ(config_at(64, 3072, 1536).split_k, 1);  // 24 tiles of 12 K blocks: 9.4 us against 11.5 us
  EXPECT_GT(config_at(1, 2112, 7168).split_k, 1);   // 17 tiles of 56 K blocks: 19.9 us, split 2 16.5 us
  EXPECT_GE(config_at(1, 512, 7168).split_k, 2);    // 4 tiles: 20.0 us, split 4 15.1 us
  EXPECT_EQ(config_at(1, 512, 7168).block_m(), 64);
  // 128 x 256 tiles on wide prefill GEMMs: N=36864, K=7168, M=4096 ran 1847 us against 2229 us (128 x 128).
  EXPECT_EQ(config_at(4096, 36864, 7168).block_n, 256);
  EXPECT_EQ(config_at(4096, 36864, 7168).split_k, 1);
}

TEST(A16w8Config, TilesStayInsideOneScaleBlockAndFitSharedMemory) {
  for (const int64_t m : {1, 32, 33, 128}) {
    for (const int64_t n : {128, 512}) {
      const A16w8Config config = choose_a16w8_config(GemmShape{m, n, 512, 16});
      EXPECT_EQ(128 % config.tile_n(), 0) << "one B scale per CTA and K block";
      EXPECT_LE(a16w8_shared_bytes(config), 227 * 1024);
      EXPECT_EQ(config.tile_m(), m <= 32 ? 32 : 64);
    }
  }
}

TEST(A16w8Config, NarrowDeepShapesSplitKAcrossWarps) {
  const A16w8Config out_proj = choose_a16w8_config(GemmShape{8, 128, 512, 16});  // absorbed MLA output
  EXPECT_EQ(out_proj.warps_k, 4);
  EXPECT_EQ(out_proj.threads(), 128);
  const A16w8Config q_proj = choose_a16w8_config(GemmShape{8, 512, 128, 16});  // one K block: nothing to split
  EXPECT_EQ(q_proj.warps_k, 1);
}

}  // namespace
}  // namespace shapescope::kernels::cuda
