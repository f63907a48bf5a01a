#include "kernels/hip/hip_operands.hpp"

#include <algorithm>

#include "kernels/hip/hip_buffer.hpp"
#include "kernels/hip/hip_check.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::rocm {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t count) {  // grid-stride loops keep the grid small for large buffers
  return unsigned(std::clamp<int64_t>((count + kThreads - 1) / kThreads, 1, 65535));
}

__global__ void fill_codes_kernel(uint8_t* codes, uint64_t seed, uint64_t stream_id, int64_t count,
                                  Fp8MatrixFormat format) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    codes[i] = matrix_code(format, synthetic::fp8_code(seed, stream_id, uint64_t(i)));
}

__global__ void fill_bf16_kernel(uint16_t* values, uint64_t seed, uint64_t stream_id, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    values[i] = synthetic::bf16_value(seed, stream_id, uint64_t(i));
}

// Scales in their logical order (the flat index is the logical one for both operands).
__global__ void fill_scales_kernel(float* scales, uint64_t seed, uint64_t stream_id, int64_t count, float factor) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    scales[i] = synthetic::block_scale(seed, stream_id, uint64_t(i)) * factor;
}

__global__ void gather_kernel(const uint16_t* output, int64_t n, const OutputIndex* indices, int64_t count,
                              uint16_t* gathered) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    gathered[i] = output[indices[i].row * n + indices[i].col];
}

void fill_scales(float* scales, uint64_t seed, uint64_t stream_id, int64_t count, Fp8MatrixFormat format,
                 hipStream_t stream) {
  if (count == 0) return;
  fill_scales_kernel<<<grid_for(count), kThreads, 0, stream>>>(scales, seed, stream_id, count,
                                                               matrix_scale_factor(format));
  HIP_CHECK(hipGetLastError());
}

}  // namespace

void fill_fp8_codes(uint8_t* codes, uint64_t seed, uint64_t stream_id, int64_t rows, int64_t k, Fp8MatrixFormat format,
                    hipStream_t stream) {
  const int64_t count = rows * k;
  if (count == 0) return;
  fill_codes_kernel<<<grid_for(count), kThreads, 0, stream>>>(codes, seed, stream_id, count, format);
  HIP_CHECK(hipGetLastError());
}

void fill_bf16_values(uint16_t* values, uint64_t seed, uint64_t stream_id, int64_t rows, int64_t k, hipStream_t stream) {
  const int64_t count = rows * k;
  if (count == 0) return;
  fill_bf16_kernel<<<grid_for(count), kThreads, 0, stream>>>(values, seed, stream_id, count);
  HIP_CHECK(hipGetLastError());
}

void fill_a_scales(float* scales, uint64_t seed, int64_t m, int64_t k, Fp8MatrixFormat format, hipStream_t stream) {
  fill_scales(scales, seed, synthetic::a_scales, m * synthetic::blocks(k), format, stream);
}

void fill_b_scales(float* scales, uint64_t seed, int64_t n, int64_t k, Fp8MatrixFormat format, hipStream_t stream) {
  fill_scales(scales, seed, synthetic::b_scales, synthetic::blocks(n) * synthetic::blocks(k), format, stream);
}

void poison_bf16(uint16_t* output, int64_t count, hipStream_t stream) {
  static_assert(kPoisonBf16 == 0xFFFF, "the poison is written bytewise");
  HIP_CHECK(hipMemsetAsync(output, 0xFF, std::size_t(count) * sizeof(uint16_t), stream));
}

std::vector<uint16_t> gather_bf16(const uint16_t* output, int64_t n, std::span<const OutputIndex> indices,
                                  hipStream_t stream) {
  const int64_t count = int64_t(indices.size());
  HipBuffer<OutputIndex> device_indices(indices.size());
  HipBuffer<uint16_t> gathered(indices.size());
  HIP_CHECK(hipMemcpyAsync(device_indices.data(), indices.data(), device_indices.bytes(), hipMemcpyHostToDevice, stream));
  gather_kernel<<<grid_for(count), kThreads, 0, stream>>>(output, n, device_indices.data(), count, gathered.data());
  HIP_CHECK(hipGetLastError());
  std::vector<uint16_t> host(indices.size());
  HIP_CHECK(hipMemcpyAsync(host.data(), gathered.data(), gathered.bytes(), hipMemcpyDeviceToHost, stream));
  HIP_CHECK(hipStreamSynchronize(stream));
  return host;
}

}  // namespace shapescope::kernels::rocm
