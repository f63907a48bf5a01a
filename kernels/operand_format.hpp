// Which operands a kernel multiplies: the encodings of A and B it reads, from the named block formats
// (common/block_format.hpp). A named format is what a layer stores; an operand format is what one kernel
// feeds its math: the weight-only kernels take a format's weights with bf16 activations (W4A16, W8A16),
// Blackwell's native FP4 GEMMs both operands in the format.
#pragma once

#include <cstdint>
#include <vector>

#include "common/block_format.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels {

enum class OperandFormat {
  fp8_blockscale,      // A e4m3 with 1x128 fp32 scales, B e4m3 with 128x128 fp32 scales
  a16w8_blockscale,    // A bf16, B as fp8_blockscale
  bf16,                // A bf16, B bf16
  mxfp8,               // A and B e4m3 with e8m0 scales per 1x32
  a16w4_mxfp4,         // A bf16, B e2m1 with e8m0 scales per 1x32
  a16w4_nvfp4,         // A bf16, B e2m1 with ue4m3 scales per 1x16 and an fp32 per-tensor scale
  a16w4_e2m1_e8m0_16,  // A bf16, B e2m1 with e8m0 scales per 1x16
  nvfp4,               // A and B as a16w4_nvfp4's B (Blackwell's native FP4 math)
};

struct OperandEncodings {
  OperandEncoding a, b;
};

// The named format a row of this operand format reports (its `format` column): the weights' format.
constexpr BlockFormatId block_format_of(OperandFormat format) {
  switch (format) {
    case OperandFormat::fp8_blockscale:
    case OperandFormat::a16w8_blockscale: return BlockFormatId::fp8_blockscale;
    case OperandFormat::bf16: return BlockFormatId::bf16;
    case OperandFormat::mxfp8: return BlockFormatId::mxfp8;
    case OperandFormat::a16w4_mxfp4: return BlockFormatId::mxfp4;
    case OperandFormat::a16w4_nvfp4:
    case OperandFormat::nvfp4: return BlockFormatId::nvfp4;
    case OperandFormat::a16w4_e2m1_e8m0_16: break;
  }
  return BlockFormatId::e2m1_e8m0_16;
}

constexpr OperandEncodings operand_encodings(OperandFormat format) {
  const BlockFormat& named = block_format(block_format_of(format));
  switch (format) {
    case OperandFormat::a16w8_blockscale: return {OperandEncoding{}, named.weights};
    case OperandFormat::nvfp4: return {named.native_activations, named.weights};
    default: break;
  }
  return {named.activations, named.weights};
}

// The operand format of a weight-only (bf16-activation) FP4 kernel running weights of `format`.
constexpr OperandFormat a16w4_operands(BlockFormatId format) {
  switch (format) {
    case BlockFormatId::mxfp4: return OperandFormat::a16w4_mxfp4;
    case BlockFormatId::nvfp4: return OperandFormat::a16w4_nvfp4;
    default: break;
  }
  return OperandFormat::a16w4_e2m1_e8m0_16;
}

// The weight formats the a16w4 kernels take (KernelIdentity::formats_taken), NVFP4 their own.
inline std::vector<BlockFormatId> a16w4_formats() {
  return {BlockFormatId::nvfp4, BlockFormatId::mxfp4, BlockFormatId::e2m1_e8m0_16};
}

// Fewest bytes one run must move: each operand (elements, block scales, tensor scales) read once, the bf16
// output written once.
constexpr double gemm_min_bytes(OperandFormat format, const GemmShape& s) {
  const OperandEncodings encodings = operand_encodings(format);
  return double(s.batch_count) * (operand_bytes(encodings.a, s.m, s.k) + operand_bytes(encodings.b, s.n, s.k) +
                                  2.0 * double(s.m) * double(s.n));
}

}  // namespace shapescope::kernels
