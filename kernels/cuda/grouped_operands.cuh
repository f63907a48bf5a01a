// Fills the activations of a grouped GEMM in place: the routed rows of A (grouped_gemm.hpp:
// logical tensor [T, K], routed row r at logical index r * K + col, its 1x128 scales at
// r * ceil(K/128) + kgroup) written wherever a kernel's layout puts a group's rows.
// Host-callable declarations only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/device_operands.cuh"

namespace shapescope::kernels::cuda {

// Routed rows [first_routed_row, first_routed_row + rows) as e4m3 codes into `codes` (row stride k).
void fill_routed_fp8_rows(uint8_t* codes, uint64_t seed, int64_t first_routed_row, int64_t rows, int64_t k,
                          cudaStream_t stream);
// The same rows as bf16 values (stream a_bf16).
void fill_routed_bf16_rows(uint16_t* values, uint64_t seed, int64_t first_routed_row, int64_t rows, int64_t k,
                           cudaStream_t stream);
// Their 1x128 scales: the scale of the i-th row and K group goes to scales[layout.offset(0, i, kgroup)].
void fill_routed_a_scales(float* scales, uint64_t seed, int64_t first_routed_row, int64_t rows, int64_t k,
                          const ScaleStrides& layout, cudaStream_t stream);

}  // namespace shapescope::kernels::cuda
