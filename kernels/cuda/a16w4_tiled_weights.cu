#include "kernels/cuda/a16w4_tiled_weights.cuh"

#include <algorithm>
#include <string>
#include <vector>

#include "common/user_error.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/grid_stride_launch.cuh"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

constexpr uint8_t kE8m0Unit = 127, kUe4m3Unit = 0x38;  // 1.0: the scale of padding
constexpr int kE8m0HighestCode = 252;                  // 6 x 2^125 is bf16's last finite e2m1 product

struct PackProblem {
  OperandEncoding encoding;
  synthetic::OperandStreams streams;
  uint64_t seed;
  int64_t batch, n, k;
  A16w4TiledLayout layout;
};

// One thread per 32-bit code word: word 2t + u of (batch, N tile, step, row) holds the pairs j = 0..3 of K =
// step*64 + 16s + 2t + 8h and the next K, s = 2u + j / 2, h = j % 2 (a16w4_tiled_code_word).
__global__ void pack_codes_kernel(uint32_t* words, PackProblem p) {
  const int64_t per_batch = p.layout.code_bytes() / 4, count = p.batch * per_batch;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i / per_batch, within = i % per_batch;
    const int word = int(within % 8), tile_row = int(within / 8 % kA16w4TiledBlockN);
    const int64_t tile_step = within / (kA16w4TiledCodeBytes / 4);
    const int64_t row = tile_step / p.layout.k_steps * kA16w4TiledBlockN + tile_row;
    const int quad_lane = word / 2, upper = word % 2;
    uint8_t codes[8] = {};
    for (int e = 0; e < 8; ++e) {
      const int pair = e / 2, substep = 2 * upper + pair / 2, half = pair % 2;
      const int64_t k = tile_step % p.layout.k_steps * kA16w4TiledBlockK + 16 * substep + 2 * quad_lane + 8 * half +
                        e % 2;
      if (row >= p.n || k >= p.k) continue;  // padding multiplies as zero
      codes[e] = uint8_t(
          synthetic::element_code(p.encoding, p.streams, p.seed, synthetic::b_index(b, row, k, p.n, p.k)) & 0xF);
    }
    words[i] = a16w4_tiled_code_word(codes);
  }
}

// One thread per scale: (batch, N tile, step, row, block s of the step), its code as a16w4_tiled_scale_bits.
__global__ void pack_scales_kernel(uint16_t* scales, PackProblem p, int* out_of_range) {
  const int per_row = p.layout.scale_bytes_per_row / 2;
  const int64_t per_batch = p.layout.scale_bytes() / 2, count = p.batch * per_batch;
  const bool e8m0 = p.encoding.scale == ScaleType::e8m0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i / per_batch, within = i % per_batch;
    const int block = int(within % per_row), tile_row = int(within / per_row % kA16w4TiledBlockN);
    const int64_t tile_step = within / (p.layout.scale_step_bytes() / 2);
    const int64_t row = tile_step / p.layout.k_steps * kA16w4TiledBlockN + tile_row;
    const int64_t k0 = tile_step % p.layout.k_steps * kA16w4TiledBlockK + int64_t(block) * p.encoding.block_k;
    uint8_t code = e8m0 ? kE8m0Unit : kUe4m3Unit;
    if (row < p.n && k0 < p.k) {
      code = synthetic::scale_code(p.encoding, p.streams, p.seed,
                                   synthetic::scale_index(p.encoding, b, row, k0, p.n, p.k));
      const bool fits = e8m0 ? code <= kE8m0HighestCode : (code & 0x7F) != 0x7F && code < 0x80;
      if (!fits) atomicOr(out_of_range, 1);
    }
    scales[i] = a16w4_tiled_scale_bits(code, e8m0);
  }
}

}  // namespace

A16w4TiledWeights pack_a16w4_tiled_weights(const OperandEncoding& weights, uint64_t seed, int64_t batch, int64_t n,
                                           int64_t k, cudaStream_t stream) {
  A16w4TiledWeights packed;
  packed.layout = A16w4TiledLayout::of(n, k, weights.block_k);
  packed.codes = DeviceBuffer<uint8_t>(std::size_t(std::max<int64_t>(batch * packed.layout.code_bytes(), 1)));
  packed.scales = DeviceBuffer<uint8_t>(std::size_t(std::max<int64_t>(batch * packed.layout.scale_bytes(), 1)));
  packed.tensor_scales = DeviceBuffer<float>(std::size_t(std::max<int64_t>(batch, 1)));
  const PackProblem problem{weights, synthetic::kBStreams, seed, batch, n, k, packed.layout};
  DeviceBuffer<int> out_of_range(1);
  CUDA_CHECK(cudaMemsetAsync(out_of_range.data(), 0, sizeof(int), stream));
  launch_grid_stride(pack_codes_kernel, batch * packed.layout.code_bytes() / 4, stream,
                     reinterpret_cast<uint32_t*>(packed.codes.data()), problem);
  launch_grid_stride(pack_scales_kernel, batch * packed.layout.scale_bytes() / 2, stream,
                     reinterpret_cast<uint16_t*>(packed.scales.data()), problem, out_of_range.data());
  std::vector<float> tensor_scales(std::size_t(std::max<int64_t>(batch, 1)), 1.0f);
  for (int64_t b = 0; b < batch; ++b)
    tensor_scales[std::size_t(b)] = synthetic::tensor_scale_value(weights, synthetic::kBStreams, seed, b);
  CUDA_CHECK(cudaMemcpyAsync(packed.tensor_scales.data(), tensor_scales.data(), tensor_scales.size() * sizeof(float),
                             cudaMemcpyHostToDevice, stream));
  int flag = 0;
  CUDA_CHECK(cudaMemcpyAsync(&flag, out_of_range.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (flag)
    throw UserError("an FP4 weight scale code lies outside what a16w4_tiled dequantizes exactly into bf16 (e8m0 "
                    "codes up to " + std::to_string(kE8m0HighestCode) +
                    ", finite ue4m3); use another kernel for these weights");
  return packed;
}

}  // namespace shapescope::kernels::cuda
