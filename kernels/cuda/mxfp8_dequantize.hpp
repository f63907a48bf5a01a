// The dequantization of mxfp8_dequantized_bf16 (mxfp8_dequantize.cu): MXFP8 operands (mxfp8_operands.hpp) to
// bf16, exactly. Declared without cuBLASLt's headers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace shapescope::kernels::cuda {

// e8m0 codes whose every e4m3 multiple is exact in bf16: value x 2^(code - 127) with |value| in [2^-9, 448]
// stays a multiple of bf16's smallest subnormal 2^-133 from code 3 and below its largest finite value
// (~2^128) through code 246 (448 x 2^119 = 1.75 x 2^127).
constexpr int kMxfp8Bf16LowestCode = 3, kMxfp8Bf16HighestCode = 246;

// One operand: e4m3 codes [rows][k] and packed scales in, bf16 [rows][k] row-major out.
struct Mxfp8DequantizedOperand {
  const uint8_t* codes = nullptr;
  const uint32_t* scales = nullptr;
  int64_t rows = 0;
  uint16_t* out = nullptr;
};

// Runs of 8 codes are indexed in 32 bits: an operand holds fewer than 2^35 elements.
constexpr int64_t kMxfp8DequantizedMostElements = int64_t(1) << 35;

// Both operands of a GEMM of depth `k` (a multiple of 8) in one launch on `stream`: out = code x 2^(scale - 127).
void dequantize_mxfp8(const Mxfp8DequantizedOperand& a, const Mxfp8DequantizedOperand& b, int64_t k,
                      cudaStream_t stream);

}  // namespace shapescope::kernels::cuda
