// Host side of the tiled W4A16 kernel (a16w4_tiled_kernel.cuh), shared by a16w4_tiled and a16w4_tiled_grouped:
// its instances by tile height and scale type, compiled once (a16w4_tiled_launch.cu), and the activations' layout.
// What all W4A16 entries share (identity, SMs planned for, the K they take) is a16w4_launch.cuh's.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/block_format.hpp"
#include "kernels/cuda/a16w4_tiled_config.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"

namespace shapescope::kernels::cuda {

// Lets the instance for `config` and `scale` use its shared memory; once before its first launch (host only).
void allow_a16w4_tiled_shared_memory(const A16w4TiledConfig& config, ScaleType scale);

// One launch over `row_units` tiles of M (find_row_tile's units) x the N tiles x config.split_k, the activations
// read through `activations` (a16w4_tiled_activation_map for the same config).
void launch_a16w4_tiled(const A16w4TiledParams& params, const CUtensorMap& activations, const A16w4TiledConfig& config,
                        ScaleType scale, int64_t row_units, bool programmatic, cudaStream_t stream);

// The activations' row stride: K rounded up to 8 elements, the 16-byte multiple a tensor map's rows need.
constexpr int64_t a16w4_tiled_lda(int64_t k) { return (k + 7) / 8 * 8; }

// The tensor map the kernel copies `rows` rows of K activations (row stride a16w4_tiled_lda(k)) through: boxes
// of config.block_m rows x 64 columns in the 128-byte swizzle, zeros past the rows and past lda.
CUtensorMap a16w4_tiled_activation_map(const uint16_t* a, int64_t rows, int64_t k, const A16w4TiledConfig& config);

// `rows` rows of K bf16 activations, written by `fill` into a zeroed [rows][k] buffer, in a [rows][lda] one whose
// columns K..lda-1 are zero (the kernel reads them; the weights there are zero codes).
template <class Fill>
DeviceBuffer<uint16_t> strided_activations(int64_t rows, int64_t k, cudaStream_t stream, const Fill& fill) {
  const int64_t lda = a16w4_tiled_lda(k);
  DeviceBuffer<uint16_t> strided(std::size_t(std::max<int64_t>(rows * lda, 1)));
  CUDA_CHECK(cudaMemsetAsync(strided.data(), 0, strided.bytes(), stream));
  if (lda == k) {
    fill(strided.data());
    return strided;
  }
  DeviceBuffer<uint16_t> dense(std::size_t(std::max<int64_t>(rows * k, 1)));
  CUDA_CHECK(cudaMemsetAsync(dense.data(), 0, dense.bytes(), stream));
  fill(dense.data());
  if (rows > 0)
    CUDA_CHECK(cudaMemcpy2DAsync(strided.data(), std::size_t(lda) * 2, dense.data(), std::size_t(k) * 2,
                                 std::size_t(k) * 2, std::size_t(rows), cudaMemcpyDeviceToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));  // before `dense` is freed
  return strided;
}

}  // namespace shapescope::kernels::cuda
