// The portable FP8 block-scale GEMM: C (bf16, [m][n]) = A x B^T with A e4m3 [m][k] and 1x128
// f32 scales [m][ceil(k/128)], B e4m3 [n][k] and 128x128 f32 scales [ceil(n/128)][ceil(k/128)]
// (DeepSeek-V3's scaling), or B pre-shuffled for the FP8 MFMA (kernels/mfma_preshuffled_b.hpp).
// One source for nvcc and hipcc: plain f32 FMAs through shared memory,
// no tensor or matrix cores, so it runs on any GPU either compiler targets. Each 128-wide K block
// is summed on its own and promoted into the f32 accumulator with its two scales, as the tensor
// core kernels do. It is the correctness baseline the MFMA path is measured against, not a fast
// kernel.
//
// Include from one translation unit per backend: the definitions have internal linkage so a
// binary with both backends holds two copies, not a clash.
#pragma once

#include <cstdint>

#include "kernels/fp8_e4m3.hpp"
#include "kernels/mfma_preshuffled_b.hpp"
#include "kernels/portable/gpu_portability.hpp"

namespace shapescope::kernels::portable {
namespace {

// How B's codes are stored: row-major [n][k], or pre-shuffled for the FP8 MFMA's B operand.
enum class BLayout { row_major, mfma_preshuffled };

struct PortableFp8Params {
  const uint8_t* a = nullptr;         // [m][k] e4m3 (OCP)
  const float* a_scales = nullptr;    // [m][kblocks]
  const uint8_t* b = nullptr;         // [n][k] e4m3 (OCP) in the launch's BLayout
  const float* b_scales = nullptr;    // [nblocks][kblocks]
  uint16_t* c = nullptr;              // [m][n] bf16
  int m = 0, n = 0, k = 0;
};

constexpr int kPortableScaleBlock = 128;  // the K (and N) extent of one scale
static_assert(kPortableScaleBlock == mfma_b::kBlockK, "the pre-shuffled tiles' K blocks are the scale blocks");
constexpr int kPortableTile = 64;         // output tile edge, M and N
constexpr int kPortableStepK = 32;        // K columns staged in shared memory at a time
constexpr int kPortableThreadsPerEdge = 16;
constexpr int kPortableThreads = kPortableThreadsPerEdge * kPortableThreadsPerEdge;
constexpr int kPortablePerThread = kPortableTile / kPortableThreadsPerEdge;  // 4 x 4 outputs per thread

// The byte offset of B[column][k].
template <BLayout kLayout>
__device__ __forceinline__ int64_t b_code_offset(int column, int k, int k_extent, int kblocks) {
  if constexpr (kLayout == BLayout::mfma_preshuffled) return mfma_b::shuffled_offset(column, k, kblocks);
  return int64_t(column) * k_extent + k;
}

template <BLayout kLayout>
__global__ void __launch_bounds__(kPortableThreads) portable_fp8_blockscale_kernel(const PortableFp8Params p) {
  __shared__ float code_values[256];
  // [k][row], one float of padding per row so the transposed stores spread over the banks.
  __shared__ float a_tile[kPortableStepK][kPortableTile + 1];
  __shared__ float b_tile[kPortableStepK][kPortableTile + 1];

  const int m0 = int(blockIdx.y) * kPortableTile, n0 = int(blockIdx.x) * kPortableTile;
  const int thread = int(threadIdx.x);
  const int ty = thread / kPortableThreadsPerEdge, tx = thread % kPortableThreadsPerEdge;
  const int kblocks = (p.k + kPortableScaleBlock - 1) / kPortableScaleBlock;
  code_values[thread] = decode_e4m3(uint8_t(thread));  // 256 threads, 256 codes; read after the first barrier

  float accumulators[kPortablePerThread][kPortablePerThread] = {};
  for (int kb = 0; kb < kblocks; ++kb) {
    const int k_end = p.k < (kb + 1) * kPortableScaleBlock ? p.k : (kb + 1) * kPortableScaleBlock;
    float block_sum[kPortablePerThread][kPortablePerThread] = {};
    for (int k0 = kb * kPortableScaleBlock; k0 < k_end; k0 += kPortableStepK) {
      __syncthreads();  // the previous step's tiles are consumed
      for (int q = thread; q < kPortableTile * kPortableStepK; q += kPortableThreads) {
        const int row = q / kPortableStepK, column = q % kPortableStepK;  // consecutive threads read consecutive bytes
        const int k = k0 + column;
        const bool a_valid = m0 + row < p.m && k < k_end, b_valid = n0 + row < p.n && k < k_end;
        a_tile[column][row] = a_valid ? code_values[p.a[int64_t(m0 + row) * p.k + k]] : 0.0f;
        b_tile[column][row] = b_valid ? code_values[p.b[b_code_offset<kLayout>(n0 + row, k, p.k, kblocks)]] : 0.0f;
      }
      __syncthreads();
      for (int kk = 0; kk < kPortableStepK; ++kk) {
        float a_values[kPortablePerThread], b_values[kPortablePerThread];
        for (int i = 0; i < kPortablePerThread; ++i) a_values[i] = a_tile[kk][ty + kPortableThreadsPerEdge * i];
        for (int j = 0; j < kPortablePerThread; ++j) b_values[j] = b_tile[kk][tx + kPortableThreadsPerEdge * j];
        for (int i = 0; i < kPortablePerThread; ++i)
          for (int j = 0; j < kPortablePerThread; ++j) block_sum[i][j] = fmaf(a_values[i], b_values[j], block_sum[i][j]);
      }
    }
    // Promotion: the block's sum times its activation scale (per row) and weight scale (per 128 columns).
    for (int i = 0; i < kPortablePerThread; ++i) {
      const int row = m0 + ty + kPortableThreadsPerEdge * i;
      const float a_scale = row < p.m ? p.a_scales[int64_t(row) * kblocks + kb] : 0.0f;
      for (int j = 0; j < kPortablePerThread; ++j) {
        const int column = n0 + tx + kPortableThreadsPerEdge * j;
        const float b_scale = column < p.n ? p.b_scales[int64_t(column / kPortableScaleBlock) * kblocks + kb] : 0.0f;
        accumulators[i][j] += block_sum[i][j] * (a_scale * b_scale);
      }
    }
  }
  for (int i = 0; i < kPortablePerThread; ++i) {
    const int row = m0 + ty + kPortableThreadsPerEdge * i;
    for (int j = 0; j < kPortablePerThread; ++j) {
      const int column = n0 + tx + kPortableThreadsPerEdge * j;
      if (row < p.m && column < p.n) p.c[int64_t(row) * p.n + column] = encode_bf16(accumulators[i][j]);
    }
  }
}

// Enqueues one GEMM on `stream` with B stored as `layout`; throws when the launch is refused.
void launch_portable_fp8_blockscale(const PortableFp8Params& params, BLayout layout, gpu::Stream stream) {
  const dim3 grid(unsigned((params.n + kPortableTile - 1) / kPortableTile),
                  unsigned((params.m + kPortableTile - 1) / kPortableTile));
  if (layout == BLayout::mfma_preshuffled) {
    portable_fp8_blockscale_kernel<BLayout::mfma_preshuffled><<<grid, dim3(kPortableThreads), 0, stream>>>(params);
  } else {
    portable_fp8_blockscale_kernel<BLayout::row_major><<<grid, dim3(kPortableThreads), 0, stream>>>(params);
  }
  gpu::check_launch("portable_fp8_blockscale");
}

__global__ void preshuffle_b_kernel(const uint8_t* row_major, uint8_t* shuffled, int64_t n, int64_t k) {
  const int64_t bytes = mfma_b::shuffled_bytes(n, k);
  for (int64_t offset = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; offset < bytes;
       offset += int64_t(gridDim.x) * blockDim.x)
    shuffled[offset] = mfma_b::shuffled_byte(row_major, n, k, offset);
}

// Enqueues the shuffle of B [n][k] (row-major) into `shuffled` (mfma_b::shuffled_bytes(n, k) bytes); once per
// weight, so one byte per thread is fast enough.
void launch_preshuffle_b(const uint8_t* row_major, uint8_t* shuffled, int64_t n, int64_t k, gpu::Stream stream) {
  preshuffle_b_kernel<<<1024, 256, 0, stream>>>(row_major, shuffled, n, k);
  gpu::check_launch("preshuffle_b");
}

}  // namespace
}  // namespace shapescope::kernels::portable
