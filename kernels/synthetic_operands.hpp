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
//
// The other block formats (common/block_format.hpp) use the same streams, by operand encoding:
//   codes    [batch][rows][k]                          e4m3, or e2m1 (a nibble spread over all 16 codes)
//   scales   [batch][ceil(rows/block_rows)][ceil(k/block_k)]  fp32 as above, e8m0 as an MX quantizer gives
//            O(1) data (2^(e - emax_elem), e in -2..1), ue4m3 as NVIDIA's NVFP4 recipe gives (block amax/6
//            relative to the per-tensor scale: codes for 56..448)
//   tensor   [batch]                                   fp32, NVFP4's per-tensor scale: amax/(448*6), amax in
//            [0.5, 1.5)
// Each kernel packs its physical layout from these (two e2m1 codes per byte, low nibble the even k, say).
#pragma once

#include <cstdint>

#include "common/block_format.hpp"
#include "kernels/fp4_e2m1.hpp"
#include "kernels/fp8_e4m3.hpp"
#include "kernels/fp8_e5m2.hpp"
#include "kernels/scale_e8m0.hpp"
#include "kernels/host_device.hpp"

namespace shapescope::kernels::synthetic {

constexpr int64_t kScaleBlock = 128;

enum Stream : uint64_t { a_codes = 1, a_scales = 2, b_codes = 3, b_scales = 4, a_bf16 = 5, b_bf16 = 6,
                       a_tensor_scale = 7, b_tensor_scale = 8 };

SHAPESCOPE_HD uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

SHAPESCOPE_HD uint64_t hash(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix(mix(seed ^ (stream * 0xD1B54A32D192ED03ull)) + index);
}

// Uniform in [0, 1) from (seed, stream, index).
SHAPESCOPE_HD float uniform01(uint64_t seed, uint64_t stream, uint64_t index) {
  return float(hash(seed, stream, index) >> 40) * (1.0f / 16777216.0f);
}

SHAPESCOPE_HD uint8_t fp8_code(uint64_t seed, uint64_t stream, uint64_t index) {
  return encode_e4m3((2.0f * uniform01(seed, stream, index) - 1.0f) * kE4m3Max);
}

SHAPESCOPE_HD uint8_t e5m2_code(uint64_t seed, uint64_t stream, uint64_t index) {
  return encode_e5m2((2.0f * uniform01(seed, stream, index) - 1.0f) * kE5m2Max);
}

SHAPESCOPE_HD float block_scale(uint64_t seed, uint64_t stream, uint64_t index) {
  return (0.5f + uniform01(seed, stream, index)) / kE4m3Max;
}

SHAPESCOPE_HD uint16_t bf16_value(uint64_t seed, uint64_t stream, uint64_t index) {
  return encode_bf16(2.0f * uniform01(seed, stream, index) - 1.0f);
}

SHAPESCOPE_HD int64_t blocks(int64_t extent) { return (extent + kScaleBlock - 1) / kScaleBlock; }
SHAPESCOPE_HD int64_t blocks(int64_t extent, int64_t block) { return (extent + block - 1) / block; }

// An e2m1 code: each of the 16 equally likely.
SHAPESCOPE_HD uint8_t e2m1_code(uint64_t seed, uint64_t stream, uint64_t index) {
  return uint8_t(hash(seed, stream, index) >> 60);
}

// An e8m0 scale code for elements whose largest power of two is 2^emax_elem: the MX shared scale of a block
// with floor(log2(amax)) in kLowestBlockExponent..kLowestBlockExponent + 3 (two bits of the hash).
constexpr int kLowestBlockExponent = -2;
SHAPESCOPE_HD uint8_t e8m0_scale_code(uint64_t seed, uint64_t stream, uint64_t index, int emax_elem) {
  return e8m0_code(kLowestBlockExponent + int(hash(seed, stream, index) >> 62) - emax_elem);
}

// The lowest and highest codes e8m0_scale_code makes for `emax_elem`: a kernel that takes only some scale
// codes checks these before any work, where a scan of the operands would cost a pass and a wait.
struct ScaleCodeRange {
  int lowest = 0, highest = 0;
};
inline ScaleCodeRange e8m0_scale_code_range(int emax_elem) {
  return {e8m0_code(kLowestBlockExponent - emax_elem), e8m0_code(kLowestBlockExponent + 3 - emax_elem)};
}

// A ue4m3 block scale code (e4m3 with the sign clear): amax_block / 6 relative to the per-tensor scale, for
// blocks whose amax is 1/8 to all of the tensor's.
SHAPESCOPE_HD uint8_t ue4m3_scale_code(uint64_t seed, uint64_t stream, uint64_t index) {
  return encode_e4m3((0.125f + 0.875f * uniform01(seed, stream, index)) * kE4m3Max);
}

// NVFP4's per-tensor fp32 scale of batch `batch`: amax / (448 * 6), so block scales fit e4m3.
SHAPESCOPE_HD float nvfp4_tensor_scale(uint64_t seed, uint64_t stream, int64_t batch) {
  return (0.5f + uniform01(seed, stream, uint64_t(batch))) / (kE4m3Max * kE2m1Max);
}

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


// One operand of an encoding, by the streams of A or of B: the parts a kernel packs and the reference decodes.
struct OperandStreams {
  uint64_t codes, scales, bf16, tensor;
};
constexpr OperandStreams kAStreams{Stream::a_codes, Stream::a_scales, Stream::a_bf16, Stream::a_tensor_scale};
constexpr OperandStreams kBStreams{Stream::b_codes, Stream::b_scales, Stream::b_bf16, Stream::b_tensor_scale};

// The flat index of the scale of element (batch, row, col) of a rows x k operand.
SHAPESCOPE_HD uint64_t scale_index(const OperandEncoding& encoding, int64_t b, int64_t row, int64_t col, int64_t rows,
                                   int64_t k) {
  const int64_t row_blocks = blocks(rows, encoding.block_rows), k_blocks = blocks(k, encoding.block_k);
  return uint64_t((b * row_blocks + row / encoding.block_rows) * k_blocks + col / encoding.block_k);
}

// The element's code (e4m3 or e2m1; the raw bits for bf16) at flat element index `index`.
SHAPESCOPE_HD uint16_t element_code(const OperandEncoding& encoding, const OperandStreams& streams, uint64_t seed,
                                    uint64_t index) {
  switch (encoding.element) {
    case ElementType::e2m1: return e2m1_code(seed, streams.codes, index);
    case ElementType::e4m3: return fp8_code(seed, streams.codes, index);
    case ElementType::e5m2: return e5m2_code(seed, streams.codes, index);
    case ElementType::bf16: break;
  }
  return bf16_value(seed, streams.bf16, index);
}

SHAPESCOPE_HD float decode_element(ElementType element, uint16_t code) {
  switch (element) {
    case ElementType::e2m1: return decode_e2m1(uint8_t(code));
    case ElementType::e4m3: return decode_e4m3(uint8_t(code));
    case ElementType::e5m2: return decode_e5m2(uint8_t(code));
    case ElementType::bf16: break;
  }
  return decode_bf16(code);
}

// A block scale's code (e8m0, ue4m3) at flat scale index `index`; fp32 scales have no code (block_scale).
SHAPESCOPE_HD uint8_t scale_code(const OperandEncoding& encoding, const OperandStreams& streams, uint64_t seed,
                                 uint64_t index) {
  return encoding.scale == ScaleType::ue4m3 ? ue4m3_scale_code(seed, streams.scales, index)
                                            : e8m0_scale_code(seed, streams.scales, index, element_emax(encoding.element));
}

// The block scale's value at flat scale index `index` (1 without scales).
SHAPESCOPE_HD float block_scale_value(const OperandEncoding& encoding, const OperandStreams& streams, uint64_t seed,
                                      uint64_t index) {
  switch (encoding.scale) {
    case ScaleType::fp32: return block_scale(seed, streams.scales, index);
    case ScaleType::e8m0: return decode_e8m0(scale_code(encoding, streams, seed, index));
    case ScaleType::ue4m3: return decode_e4m3(scale_code(encoding, streams, seed, index));
    case ScaleType::none: break;
  }
  return 1.0f;
}

// The per-tensor scale of batch `batch` (1 without one).
SHAPESCOPE_HD float tensor_scale_value(const OperandEncoding& encoding, const OperandStreams& streams, uint64_t seed,
                                       int64_t batch) {
  return encoding.tensor_scale ? nvfp4_tensor_scale(seed, streams.tensor, batch) : 1.0f;
}

}  // namespace shapescope::kernels::synthetic
