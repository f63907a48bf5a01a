// Fills one operand of a block-scaled format (common/block_format.hpp) in the physical layout Blackwell's cuBLASLt
// GEMMs read: codes row-major [rows][k] (e4m3 one a byte; e2m1 two a byte, the even K in the low nibble) and the
// one-byte block scales in cuBLASLt's tiled layout (cublaslt_scale_layout.hpp), from the synthetic operands.
// Host-callable declarations only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "common/block_format.hpp"

namespace shapescope::kernels::cuda {

// `streams_of_a`: the operand's synthetic streams are A's (else B's). `scales` holds cublaslt_vec_scale_bytes.
void fill_block_scaled_operand(const OperandEncoding& encoding, bool streams_of_a, uint64_t seed, int64_t rows,
                               int64_t k, uint8_t* codes, uint8_t* scales, cudaStream_t stream);

}  // namespace shapescope::kernels::cuda
