// The swap-AB decode heuristic of fp8_blockscale (kernels/cuda/fp8_blockscale_swapab_config.hpp), pure host
// code on explicit device specs: where it runs, the token width, the weight tiling and K split it prices,
// and K ranges that cover every block once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "kernels/cuda/fp8_blockscale_swapab_config.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {
namespace {

const Fp8DeviceSpec kH100 = fp8_reference_spec();
const Fp8DeviceSpec kSmallGpu{"small", 80, 227 * 1024, 30 << 20, {0, 80, 40, 24, 0, 16, 0}};

TEST(Fp8SwapAbConfig, RunsAtDecodeWithTheNarrowestTokenTileThatHoldsM) {
  for (const int64_t m : {1, 7, 8, 9, 16, 17, 32}) {
    const std::optional<Fp8SwapAbConfig> config = choose_fp8_swapab_config(GemmShape{m, 4608, 7168, 1}, kH100);
    ASSERT_TRUE(config.has_value()) << m;
    EXPECT_GE(config->tokens, m);
    EXPECT_LT(config->tokens / 2, std::max<int64_t>(m, 8)) << "the narrowest of 8, 16, 32, 64";
    EXPECT_EQ(config->k_groups(), 2);
  }
  EXPECT_FALSE(choose_fp8_swapab_config(GemmShape{33, 4608, 7168, 1}, kH100).has_value());
  const std::optional<Fp8SwapAbConfig> narrow = choose_fp8_swapab_config(GemmShape{4, 512, 7168, 1}, kH100);
  ASSERT_TRUE(narrow.has_value()) << "4 scale blocks";
  EXPECT_GT(narrow->splits, 1) << "4 scale blocks stream from more SMs with K split";
  EXPECT_EQ(choose_fp8_swapab_config(GemmShape{4, 8448, 7168, 1}, kH100)->weight_rows, 64);
  EXPECT_EQ(choose_fp8_swapab_config(GemmShape{4, 8456, 7168, 1}, kH100)->weight_rows, 128) << "133 tiles of 64";
  Fp8DeviceSpec little_shared = kH100;
  little_shared.shared_bytes_per_block_optin = 100 * 1024;
  EXPECT_FALSE(choose_fp8_swapab_config(GemmShape{4, 4608, 7168, 1}, little_shared).has_value());
}

TEST(Fp8SwapAbConfig, ForcedSplitsCoverEveryKBlockOnce) {
  ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_AB", "1", 1), 0);
  for (const int splits : {1, 2, 3, 5, 8, 20})
    for (const int64_t n : {72, 512, 1000, 4608})
      for (const int64_t k : {256, 400, 1040, 7168}) {
        ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_SPLITS", std::to_string(splits).c_str(), 1), 0);
        const std::optional<Fp8SwapAbConfig> config = choose_fp8_swapab_config(GemmShape{64, n, k, 1}, kSmallGpu);
        ASSERT_TRUE(config.has_value());
        SCOPED_TRACE("N=" + std::to_string(n) + " K=" + std::to_string(k) + " " + describe(*config));
        const int64_t kblocks = (k + 127) / 128, tiles = (n + config->weight_rows - 1) / config->weight_rows;
        EXPECT_GE(int64_t(config->splits) * config->kblocks_per_split, kblocks);
        EXPECT_LT(int64_t(config->splits - 1) * config->kblocks_per_split, kblocks) << "no empty range";
        EXPECT_LE(config->splits, std::min<int64_t>({splits, kblocks, kFp8SwapAbMaxSplits}));
        EXPECT_EQ(config->ctas, tiles * config->splits);
        EXPECT_EQ(config->tokens, 64);
        EXPECT_EQ(config->k_groups(), 2);
      }
  ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_SPLITS"), 0);
  ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_AB"), 0);
}

TEST(Fp8SwapAbConfig, KnobsForceItOffOrForceTheSplit) {
  const GemmShape shape{4, 4608, 7168, 1};
  ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_AB", "0", 1), 0);
  EXPECT_FALSE(choose_fp8_swapab_config(shape, kH100).has_value());
  ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_AB"), 0);
  ASSERT_EQ(setenv("SHAPESCOPE_FP8_SPLIT_K", "2", 1), 0);
  EXPECT_FALSE(choose_fp8_swapab_config(shape, kH100).has_value()) << "a forced tiled split runs the tiled kernel";
  ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SPLIT_K"), 0);
  ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_SPLITS", "5", 1), 0);
  const std::optional<Fp8SwapAbConfig> forced = choose_fp8_swapab_config(shape, kH100);
  ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_SPLITS"), 0);
  ASSERT_TRUE(forced.has_value());
  EXPECT_EQ(forced->splits, 5);  // 56 K blocks in ranges of 12
  EXPECT_EQ(forced->ctas, 72 * 5);
  EXPECT_EQ(describe(*forced), "swapab_n64t8k128_kgroups2_s24_splitk5_grid360");
  ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_ROWS", "128", 1), 0);
  const std::optional<Fp8SwapAbConfig> tall = choose_fp8_swapab_config(shape, kH100);
  ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_ROWS"), 0);
  ASSERT_TRUE(tall.has_value());
  EXPECT_EQ(describe(*tall), "swapab_n128t8k128_kgroups2_s12_splitk3_grid108") << "the model's split for 128 rows";
  ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_SPLITS", "1", 1), 0);
  const std::optional<Fp8SwapAbConfig> unsplit = choose_fp8_swapab_config(shape, kH100);
  ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_SPLITS"), 0);
  ASSERT_TRUE(unsplit.has_value());
  EXPECT_EQ(describe(*unsplit), "swapab_n64t8k128_kgroups2_s24_splitk1_grid72") << "one CTA per 64-row tile";
}

TEST(Fp8SwapAbConfig, SplitsKAcrossAClusterWhereThatStreamsTheWeightsSooner) {
  struct Expected {
    int64_t n, k;
    int weight_rows, splits, ctas;
    const char* why;
  };
  // DeepSeek-V3 TP8 and shapes around it on the H100's resident clusters (66, 39, 30, 0, 17 of 2-6 CTAs).
  for (const Expected& e : {
           Expected{4608, 7168, 128, 3, 108, "36 clusters of 3 fit 39: 19 K blocks of 128 rows each, not 56 of 64"},
           Expected{2112, 7168, 64, 3, 99, "33 tiles of 64 rows (the last half empty) in clusters of 3"},
           Expected{1024, 7168, 64, 6, 96, "16 tiles fit 17 clusters of 6"},
           Expected{1536, 4096, 64, 4, 96, "24 tiles fit 30 clusters of 4, not 17 of 6"},
           Expected{3072, 7168, 64, 2, 96, "48 tiles: 39 clusters of 3 are too few"},
           Expected{7168, 2304, 64, 1, 112, "18 K blocks: halving 64-row tiles' 147 KB saves less than the price"},
           Expected{4096, 512, 64, 1, 64, "4 K blocks"},
           Expected{18432, 7168, 128, 1, 144, "no tiling fits one wave: 128-row tiles, unsplit"},
       }) {
    const std::optional<Fp8SwapAbConfig> config = choose_fp8_swapab_config(GemmShape{8, e.n, e.k, 1}, kH100);
    ASSERT_TRUE(config.has_value());
    SCOPED_TRACE("N=" + std::to_string(e.n) + " K=" + std::to_string(e.k) + " " + describe(*config) + ": " + e.why);
    EXPECT_EQ(config->weight_rows, e.weight_rows);
    EXPECT_EQ(config->splits, e.splits);
    EXPECT_EQ(config->ctas, e.ctas);
  }
  // On any spec: the clusters fit one wave, and no tiling that fits is cheaper.
  for (const Fp8DeviceSpec& spec : {kH100, kSmallGpu})
    for (const int64_t n : {1024, 1536, 2112, 3072, 4096, 4608, 7168})
      for (const int64_t k : {256, 1040, 2304, 4096, 7168, 18432}) {
        const std::optional<Fp8SwapAbConfig> config = choose_fp8_swapab_config(GemmShape{4, n, k, 1}, spec);
        ASSERT_TRUE(config.has_value());
        SCOPED_TRACE(spec.name + " N=" + std::to_string(n) + " K=" + std::to_string(k) + " " + describe(*config));
        const int64_t tiles = config->ctas / config->splits;
        EXPECT_EQ(tiles * config->splits, config->ctas);
        EXPECT_LE(tiles, spec.fitting_clusters(config->splits)) << "every cluster resident at once";
        for (const int rows : {64, 128})
          for (int64_t splits = 1; splits <= kFp8SwapAbMaxSplits; ++splits) {
            const Fp8SwapAbConfig other = fp8_swapab_with_splits(GemmShape{4, n, k, 1}, rows, splits);
            if (other.ctas / other.splits <= spec.fitting_clusters(other.splits)) {
              EXPECT_LE(fp8_swapab_streaming_cost(*config), fp8_swapab_streaming_cost(other)) << describe(other);
            }
          }
      }
}

}  // namespace
}  // namespace shapescope::kernels::cuda
