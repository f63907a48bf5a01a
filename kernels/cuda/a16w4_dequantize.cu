// The dequantization of a16w4_blockscale's dequantizing path (a16w4_dequantized_gemm.hpp): the packed FP4
// weights of a16w4_layout.hpp to bf16, row-major, with the block scales folded in as the streaming kernel folds
// them.
#include <cuda_runtime.h>

#include "kernels/cuda/a16w4_blockscale_kernel.cuh"
#include "kernels/cuda/a16w4_dequantized_gemm.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {
namespace {

// One thread per lane load of the packed layout (warp tile, chunk, n8 tile, lane): its 32 elements dequantized
// with the scale folded in exactly as the streaming kernel does (value x scale x 2^-offset, exact in bf16), and
// written to B' [n][k] row-major, 8 K a store. The output scale (2^offset, any per-tensor scale) is the GEMM's
// alpha.
template <a16w4::ScaleCode kScale>
__global__ void a16w4_dequantize_kernel(const uint4* weights, const uint32_t* scales, A16w4Layout layout, int64_t n,
                                        int64_t k, uint16_t* out) {
  const int64_t thread = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = int(thread % 32), tile = int(thread / 32 % kA16w4TilesPerWarp);
  const int64_t chunk = thread / (32 * kA16w4TilesPerWarp) % layout.chunks;
  const int64_t warp_tile = thread / (32 * kA16w4TilesPerWarp * layout.chunks);
  if (warp_tile >= layout.warp_tiles) return;
  const int group = lane / 4, quad = lane % 4;
  const int64_t row = warp_tile * kA16w4WarpN + tile * 8 + group;
  if (row >= n) return;
  const uint4 packed = __ldcs(weights + layout.weight_word(warp_tile, chunk, tile) / 4 + lane);
  const uint32_t codes = __ldcs(scales + layout.scale_word(warp_tile, chunk, tile) +
                                group * layout.scale_words_per_row + (layout.scale_words_per_row == 2 ? quad / 2 : 0));
  uint32_t multipliers[4];
  a16w4::scale_multipliers<kScale>(codes, multipliers);
  const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    const int64_t col = chunk * kA16w4ChunkK + s * 32 + 8 * quad;
    if (col >= k) break;
    uint32_t pairs[4];
    a16w4::dequantize_word(words[s], multipliers[s], pairs);
    uint16_t* destination = out + row * k + col;
    if (col + 8 <= k && k % 8 == 0) {
      *reinterpret_cast<uint4*>(destination) = make_uint4(pairs[0], pairs[1], pairs[2], pairs[3]);
    } else {
      for (int j = 0; j < 8 && col + j < k; ++j) destination[j] = uint16_t(pairs[j / 2] >> (16 * (j % 2)));
    }
  }
}

}  // namespace

void dequantize_a16w4_weights(const A16w4Weights& weights, ScaleType scale, int64_t n, int64_t k, uint16_t* out,
                              cudaStream_t stream) {
  const int64_t threads = weights.layout.warp_tiles * weights.layout.chunks * kA16w4TilesPerWarp * 32;
  const dim3 grid(unsigned((threads + 255) / 256)), block(256);
  const auto* packed = reinterpret_cast<const uint4*>(weights.words.data());
  if (scale == ScaleType::e8m0) {
    a16w4_dequantize_kernel<a16w4::ScaleCode::e8m0><<<grid, block, 0, stream>>>(packed, weights.scales.data(),
                                                                                weights.layout, n, k, out);
  } else {
    a16w4_dequantize_kernel<a16w4::ScaleCode::ue4m3><<<grid, block, 0, stream>>>(packed, weights.scales.data(),
                                                                                 weights.layout, n, k, out);
  }
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace shapescope::kernels::cuda
