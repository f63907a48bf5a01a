// The kernel body shared by fp8_blockscale and fp8_blockscale_bpreshuffle:
// C[M,N] (bf16) = A[M,K] (e4m3, 1x128 scales) x B[N,K]^T (e4m3, 128x128 scales).
//
// Per CTA: a kBlockM x 128 tile of C; per 128-wide K block, A and B tiles land in
// shared memory (cp.async, 128-byte swizzle, kStages deep), one warpgroup per 64
// rows runs four wgmma m64n128k32 into a block product, and the block product is
// folded into the fp32 accumulators with scale_a[row] * scale_b (DeepGEMM-style
// promotion: the tensor cores never see a scale). Split-K CTAs add their fp32 partial tiles into one sum buffer; the last CTA
// to arrive for a tile converts the sums to bf16 and clears them.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/cuda/hopper_ptx.cuh"

namespace shapescope::kernels::cuda {

struct Fp8BlockscaleParams {
  const uint8_t* a = nullptr;        // [m][k] e4m3
  const float* a_scales = nullptr;   // [m][ceil(k/128)]
  const uint8_t* b = nullptr;        // [n][k] e4m3, or pre-shuffled tiles (fp8_blockscale_bpreshuffle.cu)
  const float* b_scales = nullptr;   // [ceil(n/128)][ceil(k/128)]
  uint16_t* c = nullptr;             // [m][n] bf16
  float* split_sums = nullptr;       // [m][n] f32 when split_k > 1, zero between launches
  int* split_arrivals = nullptr;     // one counter per output tile, zero between launches
  int m = 0, n = 0, k = 0;  // k a multiple of 16 (16-byte copies)
  int kblocks_per_split = 0;
};

namespace fp8_detail {

constexpr int kBlockN = 128;
constexpr int kBlockK = 128;            // one scale block, one 128-byte swizzle row
constexpr int kTileBytesPerRow = kBlockK;

__device__ __forceinline__ void store_bf16_pair(uint16_t* c, int m, int n, int row, int col, float v0, float v1) {
  if (row >= m || col >= n) return;
  uint16_t* out = c + int64_t(row) * n + col;
  if (col + 1 < n && n % 2 == 0) {
    *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);
  } else {
    out[0] = __bfloat16_as_ushort(__float2bfloat16_rn(v0));
    if (col + 1 < n) out[1] = __bfloat16_as_ushort(__float2bfloat16_rn(v1));
  }
}

// Adds a column pair of a partial tile into the split-K sums (one 8-byte reduction when aligned).
__device__ __forceinline__ void add_f32_pair(float* sums_row, int n, int col, float v0, float v1) {
  if (col + 1 < n && n % 2 == 0) {
    atomicAdd(reinterpret_cast<float2*>(sums_row + col), make_float2(v0, v1));
  } else {
    atomicAdd(sums_row + col, v0);
    if (col + 1 < n) atomicAdd(sums_row + col + 1, v1);
  }
}

// Reads a column pair of the split-K sums (from L2) and leaves zeros for the next launch.
__device__ __forceinline__ void take_f32_pair(float* sums_row, int n, int col, float& v0, float& v1) {
  v0 = __ldcg(sums_row + col);
  __stcg(sums_row + col, 0.0f);
  if (col + 1 < n) {
    v1 = __ldcg(sums_row + col + 1);
    __stcg(sums_row + col + 1, 0.0f);
  }
}

}  // namespace fp8_detail

// The pre-shuffled B order: [n tile of 128 rows][K block][row][128 bytes in the 128-byte
// swizzle], rows past N zero. A K-block tile is then one contiguous 16 KB run.
__host__ __device__ inline int64_t preshuffled_tile_offset(int64_t n_tile, int64_t kblock, int64_t kblocks) {
  return (n_tile * kblocks + kblock) * fp8_detail::kBlockN * fp8_detail::kTileBytesPerRow;
}

template <int kBlockM, int kStages, bool kPreshuffledB>
__global__ void __launch_bounds__(kBlockM / 64 * 128) fp8_blockscale_kernel(const Fp8BlockscaleParams p) {
  using namespace fp8_detail;
  constexpr int kThreads = kBlockM / 64 * 128;
  constexpr int kATileBytes = kBlockM * kTileBytesPerRow;
  constexpr int kBTileBytes = kBlockN * kTileBytesPerRow;
  constexpr int kStageBytes = kATileBytes + kBTileBytes;
  constexpr int kAccumulators = kBlockN / 2;  // per thread: a 64 x 128 f32 tile over 128 threads

  extern __shared__ uint8_t shared_raw[];
  const uint32_t shared_base = (ptx::shared_address(shared_raw) + 1023u) & ~1023u;  // swizzle atoms are 1 KB

  const int n_tile = blockIdx.x;
  const int n0 = n_tile * kBlockN;
  const int m0 = blockIdx.y * kBlockM;
  const int kblocks = (p.k + kBlockK - 1) / kBlockK;  // a partial last block reads zeros past K
  const int kb_begin = blockIdx.z * p.kblocks_per_split;
  const int kb_count = min(p.kblocks_per_split, kblocks - kb_begin);

  auto load_stage = [&](int slot, int kb) {
    const uint32_t a_tile = shared_base + slot * kStageBytes;
    const uint32_t b_tile = a_tile + kATileBytes;
#pragma unroll
    for (int q = threadIdx.x; q < kBlockM * 8; q += kThreads) {
      const int row = q >> 3, chunk = q & 7;
      const bool valid = m0 + row < p.m && kb * kBlockK + chunk * 16 < p.k;  // zero-fill past M and K
      const uint8_t* source = p.a + (valid ? int64_t(m0 + row) * p.k + kb * kBlockK + chunk * 16 : 0);
      ptx::copy_16_async(a_tile + ptx::swizzled_128b_offset(row, chunk), source, valid);
    }
    if constexpr (kPreshuffledB) {
      const uint8_t* tile = p.b + preshuffled_tile_offset(n_tile, kb, kblocks);
#pragma unroll
      for (int q = threadIdx.x; q < kBlockN * 8; q += kThreads) ptx::copy_16_async(b_tile + q * 16, tile + q * 16, true);
    } else {
#pragma unroll
      for (int q = threadIdx.x; q < kBlockN * 8; q += kThreads) {
        const int row = q >> 3, chunk = q & 7;
        const bool valid = n0 + row < p.n && kb * kBlockK + chunk * 16 < p.k;
        const uint8_t* source = p.b + (valid ? int64_t(n0 + row) * p.k + kb * kBlockK + chunk * 16 : 0);
        ptx::copy_16_async(b_tile + ptx::swizzled_128b_offset(row, chunk), source, valid);
      }
    }
  };

  // This thread's rows of the wgmma accumulator layout (and the two A scales they need).
  const int warpgroup = threadIdx.x / 128;
  const int lane = threadIdx.x % 32;
  const int row0 = m0 + warpgroup * 64 + (threadIdx.x / 32) % 4 * 16 + lane / 4;
  const int row1 = row0 + 8;
  const float* a_scales_row0 = p.a_scales + int64_t(min(row0, p.m - 1)) * kblocks;
  const float* a_scales_row1 = p.a_scales + int64_t(min(row1, p.m - 1)) * kblocks;
  const float* b_scales_row = p.b_scales + int64_t(n0 / 128) * kblocks;

  float accumulators[kAccumulators];
  float block_product[kAccumulators];
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) accumulators[i] = block_product[i] = 0.0f;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < kb_count) load_stage(s, kb_begin + s);
    ptx::commit_async_copies();  // empty groups keep the wait count uniform
  }

  // The block product is promoted right after its wgmmas finish: promoting it while the
  // next block's wgmmas run makes ptxas serialize every wgmma (C7514), which costs more.
  // The other warpgroup (or the other CTA on the SM) keeps the tensor cores busy meanwhile.
  for (int i = 0; i < kb_count; ++i) {
    ptx::wait_async_copies<kStages - 2>();
    ptx::fence_generic_to_async_proxy();
    __syncthreads();  // stage i is complete for all threads; stage i-1's wgmmas are done
    const int next = i + kStages - 1;
    if (next < kb_count) load_stage(next % kStages, kb_begin + next);
    ptx::commit_async_copies();

    const int kb = kb_begin + i;
    const float scale_b = __ldg(b_scales_row + kb);
    const float scale0 = __ldg(a_scales_row0 + kb) * scale_b;
    const float scale1 = __ldg(a_scales_row1 + kb) * scale_b;

    const uint32_t a_tile = shared_base + (i % kStages) * kStageBytes + warpgroup * 64 * kTileBytesPerRow;
    const uint32_t b_tile = shared_base + (i % kStages) * kStageBytes + kATileBytes;
    ptx::wgmma_fence();
#pragma unroll
    for (int k_step = 0; k_step < kBlockK / 32; ++k_step) {
      ptx::WgmmaE4m3<kBlockN>::run(block_product, ptx::swizzled_128b_descriptor(a_tile + k_step * 32),
                                   ptx::swizzled_128b_descriptor(b_tile + k_step * 32), k_step > 0);
    }
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();
    ptx::fence_accumulators(block_product);
#pragma unroll
    for (int i_acc = 0; i_acc < kAccumulators; ++i_acc)
      accumulators[i_acc] += block_product[i_acc] * ((i_acc & 2) ? scale1 : scale0);
  }

  // Accumulator i sits at row (i & 2 ? row1 : row0), column n0 + 8 * (i / 4) + 2 * (lane % 4) + (i & 1).
  const int col_base = n0 + 2 * (lane % 4);
  if (gridDim.z > 1) {
    // Split-K: add this CTA's partial tile into the f32 sums (fire-and-forget reductions in
    // L2); the last CTA to arrive for the tile takes the sums, clears them and writes C.
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const int col = col_base + 8 * j;
      if (col >= p.n) continue;
      if (row0 < p.m) add_f32_pair(p.split_sums + int64_t(row0) * p.n, p.n, col, accumulators[4 * j], accumulators[4 * j + 1]);
      if (row1 < p.m) add_f32_pair(p.split_sums + int64_t(row1) * p.n, p.n, col, accumulators[4 * j + 2], accumulators[4 * j + 3]);
    }
    __threadfence();
    __syncthreads();
    __shared__ int arrived_before;
    int* arrivals = p.split_arrivals + blockIdx.y * gridDim.x + blockIdx.x;
    if (threadIdx.x == 0) arrived_before = atomicAdd(arrivals, 1);
    __syncthreads();
    if (arrived_before != int(gridDim.z) - 1) return;
    __threadfence();  // every other CTA's reductions are visible now
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const int col = col_base + 8 * j;
      if (col >= p.n) continue;
      if (row0 < p.m) take_f32_pair(p.split_sums + int64_t(row0) * p.n, p.n, col, accumulators[4 * j], accumulators[4 * j + 1]);
      if (row1 < p.m) take_f32_pair(p.split_sums + int64_t(row1) * p.n, p.n, col, accumulators[4 * j + 2], accumulators[4 * j + 3]);
    }
    if (threadIdx.x == 0) *arrivals = 0;  // ready for the next launch
  }
#pragma unroll
  for (int j = 0; j < kBlockN / 8; ++j) {
    store_bf16_pair(p.c, p.m, p.n, row0, col_base + 8 * j, accumulators[4 * j], accumulators[4 * j + 1]);
    store_bf16_pair(p.c, p.m, p.n, row1, col_base + 8 * j, accumulators[4 * j + 2], accumulators[4 * j + 3]);
  }
}

}  // namespace shapescope::kernels::cuda
