// The per-shape heuristics of our CUDA kernels (pure host code, so they run in CI).
#include <gtest/gtest.h>

#include <algorithm>

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
    }
  }
}

TEST(Fp8BlockscaleConfig, SmallMStreamsWeightsOverEverySm) {
  for (const WeightCase& w : kDeepSeekTp8) {
    const Fp8BlockscaleConfig config = choose_fp8_blockscale_config(GemmShape{4, w.n, w.k, 1}, kH100Sms);
    SCOPED_TRACE("N=" + std::to_string(w.n) + " K=" + std::to_string(w.k));
    EXPECT_EQ(config.block_m, 64);
    const int64_t ctas = ceil_div(w.n, config.block_n) * config.split_k;
    const int64_t most_possible = ceil_div(w.n, config.block_n) * ceil_div(w.k, 128);
    // Either the grid fills every SM, or it already has one CTA per K block of every tile.
    EXPECT_GE(ctas, std::min<int64_t>(kH100Sms, most_possible));
  }
}

TEST(Fp8BlockscaleConfig, LargeMNeedsNoSplit) {
  const Fp8BlockscaleConfig config = choose_fp8_blockscale_config(GemmShape{4096, 7168, 2048, 1}, kH100Sms);
  EXPECT_EQ(config.block_m, 128);
  EXPECT_EQ(config.split_k, 1);
  EXPECT_EQ(config.kblocks_per_split, 16);
  // Two 64-row CTAs per SM must fit in 228 KB of shared memory; one 128-row CTA too.
  EXPECT_LE(2 * choose_fp8_blockscale_config(GemmShape{4, 7168, 2048, 1}, kH100Sms).shared_bytes(), 228 * 1024);
  EXPECT_LE(config.shared_bytes(), 227 * 1024);
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

}  // namespace
}  // namespace shapescope::kernels::cuda
