// Fills HIP buffers in place with the synthetic operands of kernels/synthetic_operands.hpp in
// the row-major layouts of the HIP kernels, and reads sampled outputs back for the check.
//   codes [rows][k]; A scales [m][ceil(k/128)]; B scales [ceil(n/128)][ceil(k/128)]; C [m][n].
// `as_fnuz`: codes re-coded for an e4m3fnuz matrix core (each worth half its e4m3 value,
// kernels/fp8_e4m3.hpp), and the matching scales doubled, so the product is unchanged.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels::rocm {

void fill_fp8_codes(uint8_t* codes, uint64_t seed, uint64_t stream_id, int64_t rows, int64_t k, bool as_fnuz,
                    hipStream_t stream);
void fill_a_scales(float* scales, uint64_t seed, int64_t m, int64_t k, bool as_fnuz, hipStream_t stream);
void fill_b_scales(float* scales, uint64_t seed, int64_t n, int64_t k, bool as_fnuz, hipStream_t stream);
// Sets `count` bf16 elements to kPoisonBf16.
void poison_bf16(uint16_t* output, int64_t count, hipStream_t stream);
// Copies the sampled elements of a [m][n] bf16 output to the host (synchronizes `stream`).
std::vector<uint16_t> gather_bf16(const uint16_t* output, int64_t n, std::span<const OutputIndex> indices,
                                  hipStream_t stream);

}  // namespace shapescope::kernels::rocm
