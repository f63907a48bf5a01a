// Block quantization of real float data to FP8 e4m3, the way DeepSeek-V3-style
// checkpoints and activation quantizers do it: each block's scale is amax/448, so
// the block's largest magnitude lands on e4m3's largest finite value, and each code
// is encode_e4m3(value / scale) (round to nearest even). Activations use 1x128
// groups (one scale per row per 128 columns), weights 128x128 blocks. The
// synthetic operands imitate this output; tests use it to check that real data
// survives the round trip within e4m3's precision.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/block_format.hpp"

namespace shapescope::kernels {

struct BlockQuantized {
  int64_t rows = 0, cols = 0;
  int64_t block_rows = 1, block_cols = 128;
  std::vector<uint8_t> codes;  // [rows][cols]
  std::vector<float> scales;   // [ceil(rows/block_rows)][ceil(cols/block_cols)]

  float scale_at(int64_t row, int64_t col) const;
  float dequantized(int64_t row, int64_t col) const;
};

// `values` is [rows][cols] row-major. An all-zero block gets scale 1 (every code 0).
BlockQuantized quantize_blocks(std::span<const float> values, int64_t rows, int64_t cols, int64_t block_rows,
                               int64_t block_cols);
inline BlockQuantized quantize_activations_1x128(std::span<const float> values, int64_t rows, int64_t cols) {
  return quantize_blocks(values, rows, cols, 1, 128);
}
inline BlockQuantized quantize_weights_128x128(std::span<const float> values, int64_t rows, int64_t cols) {
  return quantize_blocks(values, rows, cols, 128, 128);
}

// Block quantization along K (the columns) to an encoding with 1 x block_k scales, as the formats' owners
// define it:
//   e8m0 scales (OCP MX spec v1.0, MXFP8/MXFP4): the block's shared scale is 2^(floor(log2(amax)) - emax_elem),
//     each code is the element format's nearest value to value / scale, ties to even, saturating to its
//     largest finite value (an all-zero block gets scale 2^0);
//   ue4m3 scales with a per-tensor fp32 scale (NVIDIA's NVFP4): tensor scale = amax_tensor / (448 * 6), block
//     scale = e4m3(amax_block / 6 / tensor scale), each code = e2m1(value / (block scale * tensor scale)).
struct BlockScaledQuantized {
  OperandEncoding encoding;
  int64_t rows = 0, cols = 0;
  std::vector<uint8_t> codes;        // [rows][cols], one code per element (e2m1 in the low nibble)
  std::vector<uint8_t> scale_codes;  // [rows][ceil(cols/block_k)]
  float tensor_scale = 1;

  double scale_at(int64_t row, int64_t col) const;  // block scale times tensor scale
  double dequantized(int64_t row, int64_t col) const;
};

// `values` is [rows][cols] row-major. Throws std::invalid_argument for an encoding other than 1 x block_k
// e8m0 or ue4m3 scales.
BlockScaledQuantized quantize_block_scaled(std::span<const float> values, int64_t rows, int64_t cols,
                                           const OperandEncoding& encoding);

}  // namespace shapescope::kernels
