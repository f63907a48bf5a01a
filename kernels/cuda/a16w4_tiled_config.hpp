// The tiled W4A16 kernels (a16w4_tiled, a16w4_tiled_grouped): their weight layout, launch parameters and the
// per-shape heuristic, apart from the kernel body (a16w4_tiled_kernel.cuh).
//
// A CTA computes kA16w4TiledBlockM (64 or 128) rows x 128 columns of the output over its K range, 64 of K a
// step. The FP4 weights are kept tile by tile: for each 128-row tile of N and 64-column step of K, 128 rows of
// 32 bytes of e2m1 codes (element 2j in the low nibble of byte j), then 128 rows of 64 / block_k scale codes,
// so one step's weights are two contiguous runs that 16-byte copies bring to shared memory. N is padded to 128
// and K to 64 with zero codes (and unit scales), so no copy of the weights is ever partial.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/host_device.hpp"

namespace shapescope::kernels::cuda {

constexpr int kA16w4TiledBlockN = 128;
constexpr int kA16w4TiledBlockK = 64;
constexpr int kA16w4TiledThreads = 256;  // two warpgroups
constexpr int kA16w4TiledCodeBytes = kA16w4TiledBlockN * kA16w4TiledBlockK / 2;  // one step's e2m1 codes
// One step's weights in shared memory: the codes, then room for the scale codes of 16-element blocks.
constexpr int kA16w4TiledWeightStageBytes = kA16w4TiledCodeBytes + kA16w4TiledBlockN * 4;
// Two rings of copies: activation tiles (which wgmma reads in place) and the FP4 weights (read once, by the
// dequantization a step ahead of the multiply), the weights further ahead since they come from DRAM. Two CTAs
// of either height fit one SM's shared memory.
constexpr int kA16w4TiledActivationStages = 3;
SHAPESCOPE_HD constexpr int a16w4_tiled_weight_stages(int block_m) { return block_m == 128 ? 6 : 8; }

struct A16w4TiledLayout {
  int64_t n_tiles = 0;          // ceil(N / 128)
  int64_t k_steps = 0;          // ceil(K / 64)
  int scale_bytes_per_row = 2;  // 64 / block_k: 2 (32-element blocks) or 4 (16-element ones)

  SHAPESCOPE_HD static A16w4TiledLayout of(int64_t n, int64_t k, int block_k) {
    return A16w4TiledLayout{(n + kA16w4TiledBlockN - 1) / kA16w4TiledBlockN,
                            (k + kA16w4TiledBlockK - 1) / kA16w4TiledBlockK, kA16w4TiledBlockK / block_k};
  }
  SHAPESCOPE_HD int scale_step_bytes() const { return kA16w4TiledBlockN * scale_bytes_per_row; }
  // Bytes of codes and of scales per batch (expert).
  SHAPESCOPE_HD int64_t code_bytes() const { return n_tiles * k_steps * kA16w4TiledCodeBytes; }
  SHAPESCOPE_HD int64_t scale_bytes() const { return n_tiles * k_steps * scale_step_bytes(); }
  // First byte of (N tile, K step) in one batch's codes and scales.
  SHAPESCOPE_HD int64_t code_offset(int64_t n_tile, int64_t step) const {
    return (n_tile * k_steps + step) * kA16w4TiledCodeBytes;
  }
  SHAPESCOPE_HD int64_t scale_offset(int64_t n_tile, int64_t step) const {
    return (n_tile * k_steps + step) * scale_step_bytes();
  }
};

// What one launch multiplies. Dense: `groups` 0 and `m` rows. Grouped: `groups` experts whose rows live on the
// device; contiguous (slot_rows 0, each group's first row a multiple of `align`) or masked (group g's rows from
// g x slot_rows).
struct A16w4TiledParams {
  const uint16_t* a = nullptr;  // [rows][lda] bf16, columns K..lda-1 zero
  int64_t lda = 0;              // a multiple of 8 (16-byte copies)
  const uint8_t* codes = nullptr;   // [batch][layout.code_bytes()]
  const uint8_t* scales = nullptr;  // [batch][layout.scale_bytes()]
  const float* tensor_scales = nullptr;  // [batch]: the per-tensor scale (1 where the format has none)
  uint16_t* c = nullptr;                 // [rows][n] bf16
  float* partials = nullptr;             // [rows][n] fp32, zero between runs: split K only
  unsigned* arrivals = nullptr;          // [row tiles][n tiles], zero between runs: split K only
  A16w4TiledLayout layout;
  int n = 0;
  int steps_per_split = 0;
  int m = 0;  // dense
  const int* group_rows = nullptr;
  int groups = 0, align = 1, slot_rows = 0, slot_tiles = 0;
};

struct A16w4TiledConfig {
  int block_m = 128;
  int split_k = 1;
  int steps_per_split = 1;

  int weight_stages() const { return a16w4_tiled_weight_stages(block_m); }
  // Dynamic shared memory: two bf16 weight tiles (one multiplied while the next is dequantized), the
  // activation ring, the weight ring, 1 KiB for alignment.
  int shared_bytes() const {
    return 2 * kA16w4TiledBlockN * kA16w4TiledBlockK * 2 +
           kA16w4TiledActivationStages * block_m * kA16w4TiledBlockK * 2 +
           weight_stages() * kA16w4TiledWeightStageBytes + 1024;
  }
};

// Output tiles are few at the M this kernel is for, so the heuristic aims for two CTAs on every SM (the shared
// memory of two fits): 128-row tiles where those alone fill the SMs once, else 64-row ones, then K split in
// powers of two while the CTAs stay within two per SM and each walks at least kA16w4TiledMinStepsPerSplit steps.
// `row_tiles_128` / `row_tiles_64`: the problem's tiles of M at each height (summed over groups).
constexpr int kA16w4TiledMinStepsPerSplit = 8;

inline A16w4TiledConfig choose_a16w4_tiled_config(int64_t row_tiles_128, int64_t row_tiles_64, int64_t n_tiles,
                                                  int64_t k_steps, int multiprocessors) {
  A16w4TiledConfig config;
  config.block_m = row_tiles_128 * n_tiles >= multiprocessors ? 128 : 64;
  const int64_t tiles = std::max<int64_t>((config.block_m == 128 ? row_tiles_128 : row_tiles_64) * n_tiles, 1);
  int64_t split = 1;
  while (tiles * split * 2 <= 2 * int64_t(multiprocessors) && k_steps / (split * 2) >= kA16w4TiledMinStepsPerSplit)
    split *= 2;
  config.steps_per_split = int((k_steps + split - 1) / split);
  config.split_k = int((k_steps + config.steps_per_split - 1) / config.steps_per_split);
  return config;
}

inline std::string describe(const A16w4TiledConfig& config) {
  return "wgmma_m" + std::to_string(config.block_m) + "n128k64_stages" + std::to_string(kA16w4TiledActivationStages) +
         "x" + std::to_string(config.weight_stages()) +
         "_split" + std::to_string(config.split_k);
}

}  // namespace shapescope::kernels::cuda
