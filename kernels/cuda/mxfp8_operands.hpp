// MXFP8 operands on the device as our MXFP8 kernels keep them (mxfp8_blockscale, mxfp8_dequantized_bf16):
// e4m3 codes [rows][k] row-major, and the e8m0 scales of each row packed four to a 32-bit word, one word per
// row and 128-wide K stage, [ceil(k/128)][rows]: byte j of a word is the scale of the stage's j-th 32-wide
// block (code 127, 2^0, past K). Generated from the synthetic operands (kernels/synthetic_operands.hpp), so the
// float64 reference decodes the same values.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/operand_format.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {

constexpr int kMxfp8ScaleBlock = 32;   // K elements an e8m0 scale covers (OCP MX)
constexpr int kMxfp8ScaleWordK = 128;  // K elements a packed scale word covers

inline int64_t mxfp8_scale_words(int64_t rows, int64_t k) {
  return (k + kMxfp8ScaleWordK - 1) / kMxfp8ScaleWordK * rows;
}

// Writes one operand's codes and packed scales (`encoding` and `streams` of A or B, as the reference reads
// them) on `stream`.
void fill_mxfp8_operand(const OperandEncoding& encoding, const synthetic::OperandStreams& streams, uint64_t seed,
                        int64_t rows, int64_t k, uint8_t* codes, uint32_t* scales, cudaStream_t stream);

}  // namespace shapescope::kernels::cuda
