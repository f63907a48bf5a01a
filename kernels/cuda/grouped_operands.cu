#include "kernels/cuda/grouped_operands.cuh"

#include "kernels/cuda/grid_stride_launch.cuh"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

// Element i of the block sits at logical index first + i: the routed rows are consecutive in the logical tensor.
__global__ void fill_fp8_range_kernel(uint8_t* codes, uint64_t seed, uint64_t first, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    codes[i] = synthetic::fp8_code(seed, synthetic::a_codes, first + uint64_t(i));
}

__global__ void fill_bf16_range_kernel(uint16_t* values, uint64_t seed, uint64_t first, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    values[i] = synthetic::bf16_value(seed, synthetic::a_bf16, first + uint64_t(i));
}

__global__ void fill_routed_scales_kernel(float* scales, uint64_t seed, int64_t first_routed_row, int64_t rows,
                                          int64_t kgroups, ScaleStrides layout) {
  const int64_t count = rows * kgroups;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / kgroups, kgroup = i % kgroups;
    const uint64_t logical = uint64_t((first_routed_row + row) * kgroups + kgroup);  // a_scale_index(0, r, kgroup)
    scales[layout.offset(0, row, kgroup)] = synthetic::block_scale(seed, synthetic::a_scales, logical);
  }
}

}  // namespace

void fill_routed_fp8_rows(uint8_t* codes, uint64_t seed, int64_t first_routed_row, int64_t rows, int64_t k,
                          cudaStream_t stream) {
  const int64_t count = rows * k;
  launch_grid_stride(fill_fp8_range_kernel, count, stream, codes, seed, uint64_t(first_routed_row * k), count);
}

void fill_routed_bf16_rows(uint16_t* values, uint64_t seed, int64_t first_routed_row, int64_t rows, int64_t k,
                           cudaStream_t stream) {
  const int64_t count = rows * k;
  launch_grid_stride(fill_bf16_range_kernel, count, stream, values, seed, uint64_t(first_routed_row * k), count);
}

void fill_routed_a_scales(float* scales, uint64_t seed, int64_t first_routed_row, int64_t rows, int64_t k,
                          const ScaleStrides& layout, cudaStream_t stream) {
  launch_grid_stride(fill_routed_scales_kernel, rows * synthetic::blocks(k), stream, scales, seed, first_routed_row,
                     rows, synthetic::blocks(k), layout);
}

}  // namespace shapescope::kernels::cuda
