#include "kernels/cuda/a16w4_weights.cuh"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/user_error.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(int64_t count) {
  return unsigned(std::clamp<int64_t>((count + kThreads - 1) / kThreads, 1, 65535));
}

struct PackProblem {
  OperandEncoding encoding;
  synthetic::OperandStreams streams;
  uint64_t seed;
  int64_t batch, n, k;
  A16w4Layout layout;
};

// One thread per 32-bit weight word: lane (g, q) of n8 tile t, sub-chunk s holds row g at K = s*32 + 8q + j.
__global__ void pack_weights_kernel(uint32_t* words, PackProblem p) {
  const int64_t per_batch = p.layout.weight_words(), count = p.batch * per_batch;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i / per_batch, within = i % per_batch;
    const int sub = int(within % 4), lane = int(within / 4 % 32);
    const int64_t tile_chunk = within / kA16w4WordsPerTileChunk;  // (warp tile, chunk, tile)
    const int tile = int(tile_chunk % kA16w4TilesPerWarp);
    const int64_t chunk = tile_chunk / kA16w4TilesPerWarp % p.layout.chunks;
    const int64_t warp_tile = tile_chunk / kA16w4TilesPerWarp / p.layout.chunks;
    const int64_t row = warp_tile * kA16w4WarpN + tile * 8 + lane / 4;
    const int64_t k0 = chunk * kA16w4ChunkK + sub * 32 + 8 * (lane % 4);
    uint32_t word = 0;
    for (int j = 0; j < 8; ++j) {
      if (row >= p.n || k0 + j >= p.k) continue;  // padding multiplies as zero
      const uint16_t code =
          synthetic::element_code(p.encoding, p.streams, p.seed, synthetic::b_index(b, row, k0 + j, p.n, p.k));
      word |= a16w4_place_e2m1(code & 0xF, j);
    }
    words[i] = word;
  }
}

// One thread per 32-bit scale word: byte s is the scale of sub-chunk s for quad half `half` of row g.
__global__ void pack_scales_kernel(uint32_t* scales, PackProblem p, int* out_of_range) {
  const int per_row = p.layout.scale_words_per_row;
  const int64_t per_batch = p.layout.scale_words(), count = p.batch * per_batch;
  const int64_t k_blocks = synthetic::blocks(p.k, p.encoding.block_k);
  const bool e8m0 = p.encoding.scale == ScaleType::e8m0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i / per_batch, within = i % per_batch;
    const int half = int(within % per_row), g = int(within / per_row % 8);
    const int64_t tile_chunk = within / per_row / 8;
    const int tile = int(tile_chunk % kA16w4TilesPerWarp);
    const int64_t chunk = tile_chunk / kA16w4TilesPerWarp % p.layout.chunks;
    const int64_t warp_tile = tile_chunk / kA16w4TilesPerWarp / p.layout.chunks;
    const int64_t row = warp_tile * kA16w4WarpN + tile * 8 + g;
    uint32_t word = 0;
    for (int sub = 0; sub < 4; ++sub) {
      const int64_t k0 = chunk * kA16w4ChunkK + sub * 32 + half * 16;
      uint8_t code = e8m0 ? kE8m0UnitCode : kUe4m3UnitCode;
      if (row < p.n && k0 / p.encoding.block_k < k_blocks && k0 < p.k) {
        code = synthetic::scale_code(p.encoding, p.streams, p.seed,
                                     synthetic::scale_index(p.encoding, b, row, k0, p.n, p.k));
        const bool fits = e8m0 ? code >= kE8m0LowestCode && code <= kE8m0HighestCode : code < 0x7F;
        if (!fits) atomicOr(out_of_range, 1);
      }
      word |= uint32_t(code) << (8 * sub);
    }
    scales[i] = word;
  }
}

}  // namespace

A16w4Weights pack_a16w4_weights(const OperandEncoding& weights, uint64_t seed, int64_t batch, int64_t n, int64_t k,
                                cudaStream_t stream) {
  A16w4Weights packed;
  packed.layout = A16w4Layout::of(n, k, weights.block_k);
  packed.words = DeviceBuffer<uint32_t>(std::size_t(batch * packed.layout.weight_words()));
  packed.scales = DeviceBuffer<uint32_t>(std::size_t(batch * packed.layout.scale_words()));
  packed.output_scales = DeviceBuffer<float>(std::size_t(batch));
  const PackProblem problem{weights, synthetic::kBStreams, seed, batch, n, k, packed.layout};
  DeviceBuffer<int> out_of_range(1);
  CUDA_CHECK(cudaMemsetAsync(out_of_range.data(), 0, sizeof(int), stream));
  pack_weights_kernel<<<grid_for(int64_t(packed.words.size())), kThreads, 0, stream>>>(packed.words.data(), problem);
  CUDA_CHECK_LAUNCH();
  pack_scales_kernel<<<grid_for(int64_t(packed.scales.size())), kThreads, 0, stream>>>(packed.scales.data(), problem,
                                                                                        out_of_range.data());
  CUDA_CHECK_LAUNCH();
  const int offset = weights.scale == ScaleType::e8m0 ? kE8m0ScaleOffset : kUe4m3ScaleOffset;
  std::vector<float> output_scales(std::size_t(batch), 0.0f);
  for (int64_t b = 0; b < batch; ++b)
    output_scales[std::size_t(b)] =
        std::ldexp(synthetic::tensor_scale_value(weights, synthetic::kBStreams, seed, b), offset);
  CUDA_CHECK(cudaMemcpyAsync(packed.output_scales.data(), output_scales.data(), output_scales.size() * sizeof(float),
                             cudaMemcpyHostToDevice, stream));
  int flag = 0;
  CUDA_CHECK(cudaMemcpyAsync(&flag, out_of_range.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (flag)
    throw UserError("an FP4 weight scale lies outside what the W4A16 kernels fold into bf16 (e8m0 codes " +
                    std::to_string(kE8m0LowestCode) + ".." + std::to_string(kE8m0HighestCode) +
                    ", finite ue4m3); use another kernel for these weights");
  return packed;
}

}  // namespace shapescope::kernels::cuda
