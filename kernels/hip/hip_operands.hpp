// Fills HIP buffers in place with the synthetic operands of kernels/synthetic_operands.hpp in
// the row-major layouts of the HIP kernels, and reads sampled outputs back for the check.
//   codes and bf16 values [rows][k]; A scales [m][ceil(k/128)]; B scales [ceil(n/128)][ceil(k/128)]; C [m][n].
// `format`: the FP8 flavour of the matrix core the codes feed (kernels/fp8_matrix_format.hpp); for
// e4m3fnuz the codes are re-coded (each worth half) and the scales doubled, so the product is unchanged.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/fp8_matrix_format.hpp"
#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels::rocm {

void fill_fp8_codes(uint8_t* codes, uint64_t seed, uint64_t stream_id, int64_t rows, int64_t k, Fp8MatrixFormat format,
                    hipStream_t stream);
void fill_a_scales(float* scales, uint64_t seed, int64_t m, int64_t k, Fp8MatrixFormat format, hipStream_t stream);
void fill_b_scales(float* scales, uint64_t seed, int64_t n, int64_t k, Fp8MatrixFormat format, hipStream_t stream);
// bf16 values of stream a_bf16 or b_bf16, row-major [rows][k] (the bf16 baseline's operands).
void fill_bf16_values(uint16_t* values, uint64_t seed, uint64_t stream_id, int64_t rows, int64_t k, hipStream_t stream);
// Sets `count` bf16 elements to kPoisonBf16.
void poison_bf16(uint16_t* output, int64_t count, hipStream_t stream);
// Copies the sampled elements of a [m][n] bf16 output to the host (synchronizes `stream`).
std::vector<uint16_t> gather_bf16(const uint16_t* output, int64_t n, std::span<const OutputIndex> indices,
                                  hipStream_t stream);

}  // namespace shapescope::kernels::rocm
