// The swap-AB decode heuristic of fp8_blockscale (kernels/cuda/fp8_blockscale_swapab_config.hpp), pure host
// code on explicit device specs: where it runs, the token width, and K ranges that cover every block once.
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
    EXPECT_EQ(config->splits, 1);
    EXPECT_EQ(config->weight_rows, 64) << "72 tiles of 64 rows fit on 132 SMs";
    EXPECT_EQ(config->ctas, 72);
    EXPECT_EQ(config->k_groups(), 2);
  }
  EXPECT_FALSE(choose_fp8_swapab_config(GemmShape{33, 4608, 7168, 1}, kH100).has_value());
  EXPECT_FALSE(choose_fp8_swapab_config(GemmShape{4, 512, 7168, 1}, kH100).has_value()) << "4 tiles of 132 SMs";
  EXPECT_TRUE(choose_fp8_swapab_config(GemmShape{4, 1024, 7168, 1}, kH100).has_value()) << "8 scale blocks";
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
  EXPECT_EQ(describe(*tall), "swapab_n128t8k128_kgroups2_s12_splitk1_grid36");
}

}  // namespace
}  // namespace shapescope::kernels::cuda
