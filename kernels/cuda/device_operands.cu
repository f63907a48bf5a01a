#include "kernels/cuda/device_operands.cuh"

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/grid_stride_launch.cuh"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

// Codes are stored in their logical order, so the flat index is the logical index.
__global__ void fill_fp8_codes_kernel(uint8_t* codes, uint64_t seed, uint64_t stream_id, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    codes[i] = synthetic::fp8_code(seed, stream_id, uint64_t(i));
}

__global__ void fill_bf16_kernel(uint16_t* values, uint64_t seed, uint64_t stream_id, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    values[i] = synthetic::bf16_value(seed, stream_id, uint64_t(i));
}

// One thread per logical scale (batch, outer, kgroup) in logical order; written where the layout says.
__global__ void fill_scales_kernel(float* scales, uint64_t seed, uint64_t stream_id, int64_t batch, int64_t outer,
                                   int64_t kgroups, ScaleStrides layout) {
  const int64_t count = batch * outer * kgroups;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t kgroup = i % kgroups;
    const int64_t o = (i / kgroups) % outer;
    const int64_t b = i / (kgroups * outer);
    // The logical index of a_scale_index / b_scale_index is exactly i for both operands.
    scales[layout.offset(b, o, kgroup)] = synthetic::block_scale(seed, stream_id, uint64_t(i));
  }
}

__global__ void gather_bf16_kernel(const uint16_t* output, OutputStrides layout, const OutputIndex* indices,
                                   int64_t count, uint16_t* gathered) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const OutputIndex index = indices[i];
    gathered[i] = output[index.batch * layout.batch + index.row * layout.row + index.col * layout.col];
  }
}

}  // namespace

void fill_fp8_codes(uint8_t* codes, uint64_t seed, uint64_t stream_id, int64_t batch, int64_t rows, int64_t k,
                    cudaStream_t stream) {
  const int64_t count = batch * rows * k;
  launch_grid_stride(fill_fp8_codes_kernel, count, stream, codes, seed, stream_id, count);
}

void fill_bf16_values(uint16_t* values, uint64_t seed, uint64_t stream_id, int64_t batch, int64_t rows, int64_t k,
                      cudaStream_t stream) {
  const int64_t count = batch * rows * k;
  launch_grid_stride(fill_bf16_kernel, count, stream, values, seed, stream_id, count);
}

void fill_a_scales(float* scales, uint64_t seed, int64_t batch, int64_t m, int64_t k, const ScaleStrides& layout,
                   cudaStream_t stream) {
  launch_grid_stride(fill_scales_kernel, batch * m * synthetic::blocks(k), stream, scales, seed, synthetic::a_scales,
                     batch, m, synthetic::blocks(k), layout);
}

void fill_b_scales(float* scales, uint64_t seed, int64_t batch, int64_t n, int64_t k, const ScaleStrides& layout,
                   cudaStream_t stream) {
  launch_grid_stride(fill_scales_kernel, batch * synthetic::blocks(n) * synthetic::blocks(k), stream, scales, seed,
                     synthetic::b_scales, batch, synthetic::blocks(n), synthetic::blocks(k), layout);
}

void poison_bf16(uint16_t* output, int64_t count, cudaStream_t stream) {
  static_assert(kPoisonBf16 == 0xFFFF, "a byte-wise memset writes the poison only when both bytes are 0xFF");
  CUDA_CHECK(cudaMemsetAsync(output, 0xFF, std::size_t(count) * sizeof(uint16_t), stream));
}

std::vector<uint16_t> gather_bf16(const uint16_t* output, const OutputStrides& layout,
                                  std::span<const OutputIndex> indices, cudaStream_t stream) {
  std::vector<uint16_t> gathered(indices.size());
  if (indices.empty()) return gathered;
  DeviceBuffer<OutputIndex> device_indices(indices.size());
  DeviceBuffer<uint16_t> device_gathered(indices.size());
  CUDA_CHECK(cudaMemcpyAsync(device_indices.data(), indices.data(), device_indices.bytes(), cudaMemcpyHostToDevice,
                             stream));
  const int64_t count = int64_t(indices.size());
  launch_grid_stride(gather_bf16_kernel, count, stream, output, layout, device_indices.data(), count,
                     device_gathered.data());
  CUDA_CHECK(cudaMemcpyAsync(gathered.data(), device_gathered.data(), device_gathered.bytes(), cudaMemcpyDeviceToHost,
                             stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return gathered;
}

}  // namespace shapescope::kernels::cuda
