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

TEST(Fp8BlockscaleConfig, SplitsLessAsReductionsGrow) {
  for (const WeightCase& w : kDeepSeekTp8) {
    SCOPED_TRACE("N=" + std::to_string(w.n) + " K=" + std::to_string(w.k));
    const Fp8BlockscaleConfig one = choose_fp8_blockscale_config(GemmShape{1, w.n, w.k, 1}, kH100Sms);
    const Fp8BlockscaleConfig sixty_four = choose_fp8_blockscale_config(GemmShape{64, w.n, w.k, 1}, kH100Sms);
    EXPECT_EQ(one.block_m, 64);
    EXPECT_LE(sixty_four.split_k, one.split_k);  // each split adds M x N reductions
  }
}

// What the H100 measurements behind the cost model showed (docs/KERNEL_NOTES.md).
TEST(Fp8BlockscaleConfig, SplitsWhereMeasurementsSaidItPays) {
  const auto split_at = [](int64_t m, int64_t n, int64_t k) {
    return choose_fp8_blockscale_config(GemmShape{m, n, k, 1}, kH100Sms).split_k;
  };
  EXPECT_EQ(split_at(1, 7168, 256), 1);    // 2 K blocks: split 2 ran 11.8 us against 6.5 us
  EXPECT_GT(split_at(1, 4608, 7168), 1);   // 36 tiles of 56 K blocks: one CTA would stream ~40 us
  EXPECT_GE(split_at(1, 512, 7168), 8);    // 4 tiles of 56 K blocks
  EXPECT_EQ(split_at(128, 7168, 2048), 1); // 128 rows of reductions cost more than the split saves (52 us)
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

TEST(A16w8Config, NarrowDeepShapesSplitKAcrossWarps) {
  const A16w8Config out_proj = choose_a16w8_config(GemmShape{8, 128, 512, 16});  // absorbed MLA output
  EXPECT_EQ(out_proj.warps_k, 4);
  EXPECT_EQ(out_proj.threads(), 128);
  const A16w8Config q_proj = choose_a16w8_config(GemmShape{8, 512, 128, 16});  // one K block: nothing to split
  EXPECT_EQ(q_proj.warps_k, 1);
}

}  // namespace
}  // namespace shapescope::kernels::cuda
