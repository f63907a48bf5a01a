// The tiled W4A16 kernels (a16w4_tiled, a16w4_tiled_grouped): their weight layout, launch parameters and the
// per-shape heuristic, apart from the kernel body (a16w4_tiled_kernel.cuh).
//
// The kernel multiplies the transposed problem, C^T = W x A^T: a CTA computes 128 weight rows (N) x block_m
// tokens (M: 32, 64 or 128) over its K range, 64 of K a step. The FP4 weights are kept tile by tile: for each
// 128-row tile of N and 64-column step of K, 128 rows of 32 bytes of e2m1 codes, then 128 rows of 64 / block_k
// block scales as bf16 (a16w4_tiled_scale_bits). Within a row, lane t of a quad loads its 16 codes as two 32-bit
// words, word u holding the four bf16 pairs j = 0..3 of the wgmma A fragment at K = 16s + 2t + 8h and the next K
// (s = 2u + j / 2, h = j % 2), their bits placed so that each pair is a shift and a mask away from bf16
// (a16w4_tiled_code_word). N is padded to 128 and K to 64 with zero codes (and unit scales), so no load of the
// weights is ever partial.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/host_device.hpp"

namespace shapescope::kernels::cuda {

constexpr int kA16w4TiledBlockN = 128;
constexpr int kA16w4TiledBlockK = 64;
// Two consumer warpgroups (64 weight rows each) and a producer warpgroup that copies the activation tiles; one
// CTA an SM, the producer handing most of its registers to the consumers.
constexpr int kA16w4TiledConsumerThreads = 256;
constexpr int kA16w4TiledThreads = kA16w4TiledConsumerThreads + 128;
constexpr int kA16w4TiledCodeBytes = kA16w4TiledBlockN * kA16w4TiledBlockK / 2;  // one step's e2m1 codes
// The ring of activation tiles the producer keeps ahead of the multiply (the weights go straight to registers).
constexpr int kA16w4TiledActivationStages = 6;

// Pair j of a code word as the bf16 bits of its two e2m1 codes times 2^-126 (exact: magnitude bits e1 e0 m become
// the two low exponent bits and the top mantissa bit, so 0.5 lands on the subnormal 2^-127 and the rest on
// normals; the sign lands on the sign). The packer stores pair 0's bits where the bf16 pair wants them (sign 15
// and 31, magnitude 6-8 and 22-24), pair 1's three bits lower, pair 2's six lower, and pair 3 in the eight bits
// left (10, 11, 13, 14 and 16 above), three shifts away: 11 instructions for four pairs, where byte-permute
// tables and a sign merge took about 30.
constexpr uint32_t kA16w4TiledPairMask = 0x81C081C0u;

SHAPESCOPE_HD uint32_t a16w4_tiled_code_pair(uint32_t word, int pair) {
  switch (pair) {
    case 0: return word & kA16w4TiledPairMask;
    case 1: return (word << 3) & kA16w4TiledPairMask;
    case 2: return (word << 6) & kA16w4TiledPairMask;
    default: return ((word >> 4) & 0x00C000C0u) | ((word >> 5) & 0x01000100u) | ((word << 1) & 0x80008000u);
  }
}

// The code word of four pairs of e2m1 codes (pair j: codes[2j] in the low half, codes[2j + 1] in the high), the
// inverse of a16w4_tiled_code_pair.
SHAPESCOPE_HD uint32_t a16w4_tiled_code_word(const uint8_t (&codes)[8]) {
  uint32_t word = 0;
  for (int j = 0; j < 4; ++j)
    for (int half = 0; half < 2; ++half) {
      const uint32_t code = codes[2 * j + half] & 0xFu, at = 16u * uint32_t(half);
      // Bit b of the code (m, e0, e1, sign) and where pair j keeps it.
      for (int b = 0; b < 4; ++b) {
        const int target = int(at) + (b == 3 ? 15 : 6 + b);
        const int stored = j < 3 ? target - 3 * j
                                 : (b < 2 ? target + 4 : b == 2 ? target + 5 : target - 1);
        word |= ((code >> b) & 1u) << stored;
      }
    }
  return word;
}

// A block scale code as the bf16 bits the kernel multiplies a code pair by: e8m0 as 2^(code - 127) (code 0 the
// subnormal 2^-127), ue4m3 as its value x 2^117 (subnormal codes normalized; a16w4_tiled_kernel.cuh says why).
// Exact: 4 significant bits at most, in range for every e8m0 code but 255 and every finite ue4m3.
SHAPESCOPE_HD uint16_t a16w4_tiled_scale_bits(uint32_t code, bool e8m0) {
  if (e8m0) return uint16_t(code == 0 ? 0x0040u : code << 7);
  const uint32_t exponent = (code >> 3) & 0xFu, mantissa = code & 7u;
  if (exponent != 0) return uint16_t(((exponent + 237u) << 7) | (mantissa << 4));  // 2^(exponent - 7 + 117)
  if (mantissa == 0) return 0;
  const uint32_t top = mantissa >= 4 ? 2 : mantissa >= 2 ? 1 : 0;  // mantissa x 2^-9 x 2^117, normalized
  return uint16_t(((108u + top + 127u) << 7) | ((mantissa << (7 - top)) & 0x7Fu));
}

struct A16w4TiledLayout {
  int64_t n_tiles = 0;          // ceil(N / 128)
  int64_t k_steps = 0;          // ceil(K / 64)
  int scale_bytes_per_row = 4;  // a bf16 scale per block: 64 / block_k x 2, 4 (32-element blocks) or 8 (16-element)

  SHAPESCOPE_HD static A16w4TiledLayout of(int64_t n, int64_t k, int block_k) {
    return A16w4TiledLayout{(n + kA16w4TiledBlockN - 1) / kA16w4TiledBlockN,
                            (k + kA16w4TiledBlockK - 1) / kA16w4TiledBlockK, 2 * kA16w4TiledBlockK / block_k};
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
// The activations travel apart, as a tensor map (A16w4TiledArguments).
struct A16w4TiledParams {
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
  int block_m = 128;  // tokens a CTA multiplies (the wgmma N)
  int split_k = 1;
  int steps_per_split = 1;

  // Dynamic shared memory: the activation ring, 1 KiB for alignment.
  int shared_bytes() const { return kA16w4TiledActivationStages * block_m * kA16w4TiledBlockK * 2 + 1024; }
};

// Output tiles are few at the M this kernel is for, so the heuristic aims to fill every SM: 128-token tiles
// where those alone give each SM a CTA, else 64; then the shortest token tile that gives as many tiles (fewer
// copies for the producer and shorter multiplies a step, for the same weights); then K split in powers of two
// while the CTAs stay within one an SM and each split walks at least kA16w4TiledMinStepsPerSplit steps. Where K
// stays whole, 128-token tiles replace the shorter ones if their fewer waves of CTAs cost less: waves x a step's
// cost, relative to the 32-token tile's 1, measured on the H100 (2026-11-25, gate_up 28672 x 8192 at M 16, 64 and
// 96): 1.1 at 64 tokens, 1.45 at 128. (Splitting K across 128-token tiles instead measured 0.45-0.96x at M 96-128.)
// `row_tiles_128` / `_64` / `_32`: the problem's tiles of M at each height (summed over groups).
constexpr int kA16w4TiledMinStepsPerSplit = 8;

inline double a16w4_tiled_step_cost(int block_m) { return block_m == 128 ? 1.45 : block_m == 64 ? 1.1 : 1.0; }

inline A16w4TiledConfig choose_a16w4_tiled_config(int64_t row_tiles_128, int64_t row_tiles_64, int64_t row_tiles_32,
                                                  int64_t n_tiles, int64_t k_steps, int multiprocessors) {
  A16w4TiledConfig config;
  int64_t row_tiles = row_tiles_128;
  if (row_tiles_128 * n_tiles < multiprocessors) {
    config.block_m = 64;
    row_tiles = row_tiles_64;
  }
  if (row_tiles_64 == row_tiles) config.block_m = 64;
  if (row_tiles_32 == row_tiles) config.block_m = 32;
  const int64_t tiles = std::max<int64_t>(row_tiles * n_tiles, 1);
  int64_t split = 1;
  while (tiles * split * 2 <= multiprocessors && k_steps / (split * 2) >= kA16w4TiledMinStepsPerSplit) split *= 2;
  config.steps_per_split = int((k_steps + split - 1) / split);
  config.split_k = int((k_steps + config.steps_per_split - 1) / config.steps_per_split);
  const auto waves = [&](int64_t ctas) {
    return double((std::max<int64_t>(ctas, 1) + multiprocessors - 1) / multiprocessors);
  };
  if (config.split_k == 1 && config.block_m != 128 &&
      waves(row_tiles_128 * n_tiles) * a16w4_tiled_step_cost(128) <
          waves(tiles) * a16w4_tiled_step_cost(config.block_m))
    config.block_m = 128;
  return config;
}

inline std::string describe(const A16w4TiledConfig& config) {
  return "wgmma_rs_w128t" + std::to_string(config.block_m) + "k64_stages" +
         std::to_string(kA16w4TiledActivationStages) + "_split" + std::to_string(config.split_k);
}

}  // namespace shapescope::kernels::cuda
