// Operands defined by (seed, logical index) through a counter-based hash, so the
// GPU can generate gigabytes of them in place, the CPU backend the same values,
// and the float64 reference any single element, without moving data around.
//
// Logical layouts (each kernel materialises its own physical layout from these):
//   A codes  [batch][m][k]                e4m3, or bf16 for A16W8 / dense bf16
//   A scales [batch][m][ceil(k/128)]      f32 (1x128 per-token groups)
//   B codes  [batch][n][k]                e4m3 (K-major, C = A * B^T), or bf16
//   B scales [batch][ceil(n/128)][ceil(k/128)]  f32 (128x128 blocks)
// Values look like a block quantizer's output: codes span the e4m3 range and
// each scale is amax/448 with amax in [0.5, 1.5), so dequantized values are O(1).
#pragma once

#include <cstdint>

#include "kernels/fp8_e4m3.hpp"
#include "kernels/host_device.hpp"

namespace shapescope::kernels::synthetic {

constexpr int64_t kScaleBlock = 128;

enum Stream : uint64_t { a_codes = 1, a_scales = 2, b_codes = 3, b_scales = 4, a_bf16 = 5, b_bf16 = 6 };

SHAPESCOPE_HD uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1) from (seed, stream, index).
SHAPESCOPE_HD float uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t h = mix(mix(seed ^ (stream * 0xD1B54A32D192ED03ull)) + index);
  return float(h >> 40) * (1.0f / 16777216.0f);
}

SHAPESCOPE_HD uint8_t fp8_code(uint64_t seed, uint64_t stream, uint64_t index) {
  return encode_e4m3((2.0f * uniform01(seed, stream, index) - 1.0f) * kE4m3Max);
}

SHAPESCOPE_HD float block_scale(uint64_t seed, uint64_t stream, uint64_t index) {
  return (0.5f + uniform01(seed, stream, index)) / kE4m3Max;
}

SHAPESCOPE_HD uint16_t bf16_value(uint64_t seed, uint64_t stream, uint64_t index) {
  return encode_bf16(2.0f * uniform01(seed, stream, index) - 1.0f);
}

SHAPESCOPE_HD int64_t blocks(int64_t extent) { return (extent + kScaleBlock - 1) / kScaleBlock; }

// Flat logical indices.
SHAPESCOPE_HD uint64_t a_index(int64_t b, int64_t row, int64_t col, int64_t m, int64_t k) {
  return uint64_t((b * m + row) * k + col);
}
SHAPESCOPE_HD uint64_t a_scale_index(int64_t b, int64_t row, int64_t kgroup, int64_t m, int64_t k) {
  return uint64_t((b * m + row) * blocks(k) + kgroup);
}
SHAPESCOPE_HD uint64_t b_index(int64_t b, int64_t row, int64_t col, int64_t n, int64_t k) {
  return uint64_t((b * n + row) * k + col);
}
SHAPESCOPE_HD uint64_t b_scale_index(int64_t b, int64_t nblock, int64_t kblock, int64_t n, int64_t k) {
  return uint64_t((b * blocks(n) + nblock) * blocks(k) + kblock);
}

}  // namespace shapescope::kernels::synthetic
