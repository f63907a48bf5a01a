// The swap-AB schedule of fp8_blockscale at decode (fp8_blockscale_swapab_kernel.cuh): the weights are the
// MMA's M (64 or 128 rows of N per CTA, within one 128 x 128 scale block), the tokens its N (8, 16, 32 or 64
// columns, the fewest that hold M). A 64-row tile holding 1-64 tokens pays its per-K-block chain for rows
// that hold nothing; here the MMA's token width follows M, and the weight tiles are 64 rows where that fills
// more SMs, or their K is split across a cluster where that streams the weights sooner despite the
// reduction. Host side only: the choice and its name.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "kernels/cuda/fp8_blockscale_config.hpp"
#include "kernels/cuda/fp8_blockscale_device_spec.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

constexpr int kFp8SwapAbScaleBlockRows = 128;  // weight rows sharing one scale per K block
constexpr int kFp8SwapAbMaxTokens = 64;    // the widest token tile compiled (wgmma n64)
constexpr int kFp8SwapAbBlockK = 128;
// Math warpgroups taking turns on the K blocks of the range (each K block is a serial chain of wgmma, wait
// and promotion). Two: four measured 3-10% slower at every token width (docs/KERNEL_NOTES.md).
constexpr int fp8_swapab_k_groups(int /*tokens*/) { return 2; }
// K split across the CTAs of a thread-block cluster (each K range one CTA, rank 0 reducing over the
// cluster's shared memory): at most this many ranges per weight tile (the portable cluster size).
constexpr int kFp8SwapAbMaxSplits = 8;
// What a K split costs, in the weight bytes a CTA streams meanwhile: the cluster barriers and rank 0's pulls
// come after the last K block, with nothing left to stream. Estimated, not measured on this kernel: ~2 us
// (the tiled kernel's cluster split at decode, docs/KERNEL_NOTES.md) at ~58 KB/us, one SM's weight intake
// measured with 128-row tiles (docs/KERNEL_NOTES.md "Decode: swap-AB").
constexpr int64_t kFp8SwapAbSplitPriceBytes = 2 * 58 * 1000;
// Where the heuristic takes swap-AB (measured on an H100, 2026-11-25, DeepSeek-V3 TP8, graph timing with
// PDL; docs/KERNEL_NOTES.md "Decode: swap-AB"): up to 32 tokens, at every N. With 64 tokens the tiled kernel
// was faster on the K=256 and N=4608 shapes. Narrow N (N=512: 4 scale blocks) takes it too since the cluster
// split fills the SMs: 1.9x the tiled kernel's split at M 1-32.
constexpr int kFp8SwapAbLargestM = 32;

// Shared memory of one CTA: a ring of stages (weight tile, token tile) on 1 KB, the tokens' scales per
// stage in 256-byte slots (a bulk copy's destination is 128-byte aligned), as deep as fits, a multiple
// of the K groups (each stage always serves one group).
constexpr int fp8_swapab_stage_bytes(int weight_rows, int tokens) {
  return weight_rows * kFp8SwapAbBlockK + tokens * kFp8SwapAbBlockK;
}
constexpr int kFp8SwapAbScaleSlotBytes = 256;
constexpr int kFp8SwapAbMaxStages = 32;
constexpr int fp8_swapab_stages(int weight_rows, int tokens) {
  // The opt-in shared memory of sm_90, less the alignment and the barriers (16 bytes per stage).
  const int budget = 227 * 1024 - 1024 - 16 * kFp8SwapAbMaxStages;
  const int fitting = budget / (fp8_swapab_stage_bytes(weight_rows, tokens) + kFp8SwapAbScaleSlotBytes);
  return std::min(fitting, kFp8SwapAbMaxStages) / fp8_swapab_k_groups(tokens) * fp8_swapab_k_groups(tokens);
}
constexpr int fp8_swapab_shared_bytes(int weight_rows, int tokens) {
  return fp8_swapab_stages(weight_rows, tokens) *
             (fp8_swapab_stage_bytes(weight_rows, tokens) + kFp8SwapAbScaleSlotBytes) +
         1024;
}
constexpr int fp8_swapab_threads(int tokens) { return (fp8_swapab_k_groups(tokens) + 1) * 128; }  // + copying

struct Fp8SwapAbConfig {
  int weight_rows = 128;      // rows of N per CTA (the MMA's M): 64 or 128
  int tokens = 8;             // the MMA's N: M rounded up to 8, 16, 32 or 64
  int splits = 1;             // K ranges (CTAs) per weight tile
  int kblocks_per_split = 1;  // 128-wide K blocks of each range
  int ctas = 1;               // weight tiles x splits, at most one wave

  int k_groups() const { return fp8_swapab_k_groups(tokens); }
  int stages() const { return fp8_swapab_stages(weight_rows, tokens); }
  int shared_bytes() const { return fp8_swapab_shared_bytes(weight_rows, tokens); }
};

// The token width of the compiled instances that holds M rows (M <= kFp8SwapAbMaxTokens).
inline int fp8_swapab_tokens(int64_t m) {
  int tokens = 8;
  while (tokens < m) tokens *= 2;
  return tokens;
}

// `splits` K ranges over every weight tile of `shape` (as many as equal ranges of whole K blocks give).
inline Fp8SwapAbConfig fp8_swapab_with_splits(const GemmShape& shape, int weight_rows, int64_t splits) {
  const int64_t kblocks = (shape.k + kFp8SwapAbBlockK - 1) / kFp8SwapAbBlockK;
  const int64_t tiles = (shape.n + weight_rows - 1) / weight_rows;
  Fp8SwapAbConfig config;
  config.weight_rows = weight_rows;
  config.tokens = fp8_swapab_tokens(shape.m);
  config.kblocks_per_split = int((kblocks + splits - 1) / std::max<int64_t>(splits, 1));
  config.splits = int((kblocks + config.kblocks_per_split - 1) / config.kblocks_per_split);  // no empty range
  config.ctas = int(tiles * config.splits);
  return config;
}

// What the swap-AB heuristic minimises: every CTA streams its tile's K range, so the time goes with the
// longest range's weight bytes, plus kFp8SwapAbSplitPriceBytes where K is split.
inline int64_t fp8_swapab_streaming_cost(const Fp8SwapAbConfig& config) {
  return int64_t(config.weight_rows) * config.kblocks_per_split * kFp8SwapAbBlockK +
         (config.splits > 1 ? kFp8SwapAbSplitPriceBytes : 0);
}

// The swap-AB weight tiling that streams the weights soonest (fp8_swapab_streaming_cost). Among
// 64 or 128 weight rows and 1..kFp8SwapAbMaxSplits ranges whose clusters are all resident at once (one
// wave), the cheapest; ties go to fewer ranges, then shorter tiles. Forced rows or ranges are taken as given
// (several waves if so); where nothing fits one wave, 128-row tiles without a split.
inline Fp8SwapAbConfig fp8_swapab_cheapest_tiling(const GemmShape& shape, const Fp8DeviceSpec& spec,
                                                  std::optional<int> forced_rows, std::optional<int> forced_splits) {
  const int64_t kblocks = (shape.k + kFp8SwapAbBlockK - 1) / kFp8SwapAbBlockK;
  std::optional<Fp8SwapAbConfig> best;
  int64_t best_cost = 0;
  const int64_t most_splits = std::min<int64_t>(kblocks, kFp8SwapAbMaxSplits);
  for (int64_t splits = 1; splits <= most_splits; ++splits) {
    if (forced_splits && splits != std::clamp<int64_t>(*forced_splits, 1, most_splits)) continue;
    for (const int weight_rows : {64, 128}) {
      if (forced_rows && weight_rows != (*forced_rows == 64 ? 64 : 128)) continue;
      const Fp8SwapAbConfig config = fp8_swapab_with_splits(shape, weight_rows, splits);
      const int64_t tiles = config.ctas / config.splits;
      if (!forced_splits && tiles > spec.fitting_clusters(config.splits)) continue;
      if (!forced_splits && config.splits != splits) continue;  // the same ranges as fewer splits give
      const int64_t cost = fp8_swapab_streaming_cost(config);
      if (!best || cost < best_cost) {
        best = config;
        best_cost = cost;
      }
    }
  }
  return best ? *best : fp8_swapab_with_splits(shape, forced_rows == 64 ? 64 : 128, 1);
}

// Swap-AB at decode where the measurements above found it faster, in the cheapest tiling; nullopt where the
// tiled kernel runs. SHAPESCOPE_FP8_SWAP_AB=0 keeps every M on the tiled kernel, =1 takes swap-AB at every M it
// runs (up to 64); SHAPESCOPE_FP8_SWAP_ROWS (64, 128) forces its weight rows per CTA, SHAPESCOPE_FP8_SWAP_SPLITS
// its K ranges (=1: no cluster split) (forced_setting.hpp). A forced tile or split of the tiled kernel
// (SHAPESCOPE_FP8_ROW_GROUPS, _BLOCK_N, _SPLIT_K, _TAIL_SPLITS) runs the tiled kernel.
inline std::optional<Fp8SwapAbConfig> choose_fp8_swapab_config(const GemmShape& shape, const Fp8DeviceSpec& spec) {
  const bool tiled_forced = forced_fp8_setting("SHAPESCOPE_FP8_ROW_GROUPS") > 0 ||
                            forced_fp8_setting("SHAPESCOPE_FP8_BLOCK_N") > 0 ||
                            forced_fp8_setting("SHAPESCOPE_FP8_SPLIT_K") > 0 ||
                            forced_fp8_setting("SHAPESCOPE_FP8_TAIL_SPLITS") > 0;
  const std::optional<int> forced = forced_setting("SHAPESCOPE_FP8_SWAP_AB");
  if (tiled_forced || forced == 0 || shape.m > kFp8SwapAbMaxTokens || shape.m < 1 || spec.multiprocessors < 1 ||
      std::max(fp8_swapab_shared_bytes(64, kFp8SwapAbMaxTokens), fp8_swapab_shared_bytes(128, kFp8SwapAbMaxTokens)) +
              16 * kFp8SwapAbMaxStages >
          spec.shared_bytes_per_block_optin)
    return std::nullopt;
  if (forced != 1 && shape.m > kFp8SwapAbLargestM) return std::nullopt;
  return fp8_swapab_cheapest_tiling(shape, spec, forced_setting("SHAPESCOPE_FP8_SWAP_ROWS"),
                                    forced_setting("SHAPESCOPE_FP8_SWAP_SPLITS"));
}

inline std::string describe(const Fp8SwapAbConfig& config) {
  return "swapab_n" + std::to_string(config.weight_rows) + "t" + std::to_string(config.tokens) + "k128_kgroups" +
         std::to_string(config.k_groups()) + "_s" + std::to_string(config.stages()) + "_splitk" +
         std::to_string(config.splits) + "_grid" + std::to_string(config.ctas);
}

// The kernel's configuration columns: a CTA's output tile is the tokens x weight_rows columns of C.
inline KernelConfig kernel_config(const Fp8SwapAbConfig& config) {
  return KernelConfig{config.tokens, config.weight_rows, 1, 1, 1, config.splits};
}

}  // namespace shapescope::kernels::cuda
