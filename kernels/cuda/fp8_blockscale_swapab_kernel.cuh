// fp8_blockscale at decode as the transposed product C^T = B x A^T (swap-AB): C[M,N] (bf16) = A[M,K] (e4m3,
// 1x128 scales) x B[N,K]^T (e4m3, 128x128 scales), with the weights as wgmma's M and the tokens as its N.
//
// A CTA takes 64 or 128 weight rows (within one 128 x 128 scale block of B per K block) and one K range of
// them; the grid is every weight tile times its K ranges (fp8_blockscale_swapab_config.hpp), one CTA per SM.
// The last warpgroup's copy thread has the copy engine fill a ring of stages, each a K block's weight tile,
// the tokens' tile (kTokens rows, M rounded up to 8 delivered) and their scales. Under programmatic dependent
// launch the weights do not depend on the previous grid: the ring's first stages get their weight tiles
// before the wait, the tokens after it. Both operands are K-major in the 128-byte swizzle, as TMA lays them.
//
// The math warpgroups (K groups) take turns on the K blocks of the range; each runs, per K block, wgmma
// m64nTk32 x 4 per 64-row half of the weight tile (against all tokens) into a block product and promotes it:
// acc[n][t] += product[n][t] * scale_b(n block, k block) * scale_a(t, k block), the weight scale one per
// warpgroup and K block, the token scale one per accumulator column. At the end the other groups' sums go
// through shared memory to the first. With K split, the K ranges of one weight tile are the CTAs of one
// thread-block cluster: each leaves its partial tile in its own shared memory, and rank 0 pulls the others
// over the cluster's shared-memory network in rank order (deterministic whichever CTA finishes first) and
// stores; no global workspace, no count, nothing to reset between launches. The tile is written transposed:
// neighbouring lanes trade one value so each stores two adjacent columns of C.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/cuda/fp8_blockscale_kernel.cuh"
#include "kernels/cuda/fp8_blockscale_swapab_config.hpp"
#include "kernels/cuda/fp8_blockscale_swapab_launch.hpp"
#include "kernels/cuda/hopper_ptx.cuh"
#include "kernels/cuda/hopper_tma.cuh"
#include "kernels/cuda/hopper_wgmma_e4m3_narrow.cuh"

namespace shapescope::kernels::cuda {


namespace fp8_swapab_detail {


// Registers per thread after the copy warpgroup hands its share to the math warpgroups (setmaxnreg,
// multiples of 8). The CTA holds what it was launched with, the launch bound's cap per thread (ptxas
// compiles a kernel using setmaxnreg to it): asking for more than the copy warpgroup frees never returns.
template <int kKGroups>
struct RegisterSplit {
  static constexpr int threads = (kKGroups + 1) * 128;
  static constexpr int at_launch = 65536 / threads / 8 * 8;
  static constexpr int producer = 40;
  static constexpr int consumer = (at_launch * threads - 128 * producer) / (kKGroups * 128) / 8 * 8;
};
static_assert(RegisterSplit<2>::consumer == 232 && RegisterSplit<4>::consumer == 104, "as ptxas allots them");

template <int kWeightRows, int kTokens>
struct Layout {
  static constexpr int kStages = fp8_swapab_stages(kWeightRows, kTokens);
  static constexpr int kStageBytes = fp8_swapab_stage_bytes(kWeightRows, kTokens);
  static constexpr int kWeightTileBytes = kWeightRows * kFp8SwapAbBlockK;
  static constexpr int kHalves = kWeightRows / 64;   // wgmma m64 per K step
  static constexpr int kAccumulators = kTokens / 2;  // per 64-row half: 64 x kTokens f32 over 128 threads
  static constexpr int kPartialFloats = kHalves * kAccumulators * 128;
  static_assert(kPartialFloats == fp8_swapab_partial_floats(kWeightRows, kTokens));
  static_assert(kFp8SwapAbScaleBlockRows % kWeightRows == 0, "a weight tile within one scale block");
  static constexpr int kKGroups = fp8_swapab_k_groups(kTokens);
  static_assert(kStages >= 4 && kStages % kKGroups == 0, "a ring whose stages each serve one K group");
  static_assert(kStageBytes % 1024 == 0, "tiles on the swizzle's 1 KB period");
  static_assert((kKGroups - 1) * kPartialFloats * 4 <= kStages * kStageBytes, "the K groups' exchange fits in the ring");

  uint32_t ring, scales, full, empty;
  __device__ uint32_t weight_tile(int stage) const { return ring + stage * kStageBytes; }
  __device__ uint32_t token_tile(int stage) const { return weight_tile(stage) + kWeightTileBytes; }
  __device__ uint32_t scale_slot(int stage) const { return scales + stage * kFp8SwapAbScaleSlotBytes; }
  __device__ uint32_t full_barrier(int stage) const { return full + 8 * stage; }
  __device__ uint32_t empty_barrier(int stage) const { return empty + 8 * stage; }
};

// Accumulator i of a math thread (either 64-row half): weight row (column of C) within the half, token (row of C).
__device__ __forceinline__ int accumulator_row(int i) {
  return int(threadIdx.x % 128 / 32 * 16 + threadIdx.x % 32 / 4 + 8 * ((i / 2) % 2));
}
__device__ __forceinline__ int accumulator_token(int i) { return 8 * (i / 4) + 2 * int(threadIdx.x % 4) + i % 2; }

// The copy thread: the K range's blocks into the ring; the first stages' weight tiles before the previous
// grid ends.
template <int kWeightRows, int kTokens, bool kPreshuffledB, class Join>
__device__ __forceinline__ void produce(const Fp8SwapAbParams& p, const Layout<kWeightRows, kTokens>& smem,
                                        int tile, int kb_begin, int kb_count, const Join& join_grid_order) {
  using Smem = Layout<kWeightRows, kTokens>;
  constexpr int kStages = Smem::kStages;
  const int kblocks = (p.k + kFp8SwapAbBlockK - 1) / kFp8SwapAbBlockK;
  const uint32_t stage_bytes = uint32_t(Smem::kWeightTileBytes + p.a_box_rows * (kFp8SwapAbBlockK + 4));
  const int first_row = tile * kWeightRows;
  const auto load_weights = [&](int i, int stage) {
    const int kb = kb_begin + i;
    if constexpr (kPreshuffledB) {  // the rows of a pre-shuffled 128-row tile lie one after another
      const int scale_block = first_row / kFp8SwapAbScaleBlockRows;
      tma::load_tile_2d(smem.weight_tile(stage), &p.b_map, 0,
                        int(preshuffled_tile_offset(scale_block, kb, kblocks) / fp8_detail::kTileBytesPerRow) +
                            first_row % kFp8SwapAbScaleBlockRows,
                        smem.full_barrier(stage));
    } else {
      tma::load_tile_2d(smem.weight_tile(stage), &p.b_map, kb * kFp8SwapAbBlockK, first_row,
                        smem.full_barrier(stage));
    }
  };
  const auto load_tokens = [&](int i, int stage) {
    const int kb = kb_begin + i;
    tma::load_tile_2d(smem.token_tile(stage), &p.a_map, kb * kFp8SwapAbBlockK, 0, smem.full_barrier(stage));
    tma::load_tile_2d(smem.scale_slot(stage), &p.a_scale_map, 0, kb, smem.full_barrier(stage));
  };
  const int ahead = min(kb_count, kStages);
  for (int i = 0; i < ahead; ++i) {  // ring position i is stage i in its first phase
    tma::arrive_expect_bytes(smem.full_barrier(i), stage_bytes);
    load_weights(i, i);
  }
  join_grid_order();
  for (int i = 0; i < ahead; ++i) load_tokens(i, i);
  for (int i = ahead; i < kb_count; ++i) {
    const int stage = i % kStages;
    tma::wait_barrier(smem.empty_barrier(stage), ((i / kStages) & 1) ^ 1);
    tma::arrive_expect_bytes(smem.full_barrier(stage), stage_bytes);
    load_weights(i, stage);
    load_tokens(i, stage);
  }
}

// Writes the tile transposed into C: lanes of adjacent weight rows (quads 2q, 2q + 1) trade one value of each
// token pair, so each stores two adjacent columns of one token.
template <int kHalves, int kAccumulators>
__device__ __forceinline__ void store_transposed(const float (&acc)[kHalves][kAccumulators],
                                                 const Fp8SwapAbParams& p, int n0) {
  const bool even = threadIdx.x / 4 % 2 == 0;
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
#pragma unroll
    for (int i = 0; i < kAccumulators; i += 2) {
      const float received = __shfl_xor_sync(0xFFFFFFFFu, even ? acc[h][i + 1] : acc[h][i], 4);
      const int col = n0 + h * 64 + accumulator_row(i) - (even ? 0 : 1);
      const int token = accumulator_token(i) + (even ? 0 : 1);
      if (token < p.m && col < p.n)
        *reinterpret_cast<__nv_bfloat162*>(p.c + int64_t(token) * p.n + col) =
            even ? __floats2bfloat162_rn(acc[h][i], received) : __floats2bfloat162_rn(received, acc[h][i + 1]);
    }
  }
}

}  // namespace fp8_swapab_detail

template <int kWeightRows, int kTokens, bool kPreshuffledB>
__global__ void __launch_bounds__(fp8_swapab_threads(kTokens), 1)
    fp8_blockscale_swapab_kernel(const __grid_constant__ Fp8SwapAbParams p) {
  using namespace fp8_swapab_detail;
  using Smem = Layout<kWeightRows, kTokens>;
  constexpr int kHalves = Smem::kHalves;
  constexpr int kStages = Smem::kStages;
  constexpr int kAccumulators = Smem::kAccumulators;
  constexpr int kKGroups = Smem::kKGroups;
  constexpr int kMathThreads = kKGroups * 128;
  constexpr int kMathBarrier = 1;

  extern __shared__ uint8_t shared_raw[];
  __shared__ alignas(8) uint64_t barriers[2 * kStages];
  Smem smem;
  smem.ring = (ptx::shared_address(shared_raw) + 1023u) & ~1023u;
  smem.scales = smem.ring + kStages * Smem::kStageBytes;
  smem.full = ptx::shared_address(&barriers[0]);
  smem.empty = ptx::shared_address(&barriers[kStages]);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      tma::init_barrier(smem.full_barrier(s), 1);  // the copy thread's arrival carries the byte count
      tma::init_barrier(smem.empty_barrier(s), 4);  // lane 0 of every warp of the consuming K group
    }
    tma::fence_barrier_init();
  }
  __syncthreads();

  const int kblocks = (p.k + kFp8SwapAbBlockK - 1) / kFp8SwapAbBlockK;
  const int tile = int(blockIdx.x) / p.splits, split = int(blockIdx.x) % p.splits;  // split: the cluster rank
  const int kb_begin = split * p.kblocks_per_split;
  const int kb_count = min(p.kblocks_per_split, kblocks - kb_begin);
  // Under programmatic dependent launch the previous grid may still run: every thread waits for it before
  // its first global access but the weights', then lets the next grid's CTAs start on the SMs ours free.
  const auto join_grid_order = [] {
    ptx::wait_for_previous_grid();
    ptx::allow_dependent_launch();
  };
  // Under a K split every thread of the cluster passes its two barriers (below), those with no part in the
  // reduction too: none leaves before them.
  const auto pass_cluster_barriers = [&p] {
    if (p.splits > 1) {
      tma::sync_cluster();
      tma::sync_cluster();
    }
  };
  if (threadIdx.x >= kMathThreads) {  // the copy warpgroup: one thread issues, the others idle
    tma::release_registers<fp8_swapab_detail::RegisterSplit<kKGroups>::producer>();
    if (threadIdx.x == kMathThreads) {
      tma::prefetch_tensor_map(&p.b_map);
      tma::prefetch_tensor_map(&p.a_map);
      tma::prefetch_tensor_map(&p.a_scale_map);
      produce<kWeightRows, kTokens, kPreshuffledB>(p, smem, tile, kb_begin, kb_count, join_grid_order);
    } else {
      join_grid_order();
    }
    pass_cluster_barriers();
    return;
  }
  tma::claim_registers<fp8_swapab_detail::RegisterSplit<kKGroups>::consumer>();
  join_grid_order();

  const int k_group = int(threadIdx.x) / 128, lane = int(threadIdx.x) % 32, thread_in_group = int(threadIdx.x) % 128;
  const float* const b_scales =
      p.b_scales + int64_t(tile * kWeightRows / kFp8SwapAbScaleBlockRows) * kblocks + kb_begin;
  float acc[kHalves][kAccumulators];
  float product[kHalves][kAccumulators];
#pragma unroll
  for (int h = 0; h < kHalves; ++h)
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) acc[h][i] = 0.0f;

  for (int i = k_group; i < kb_count; i += kKGroups) {
    const int stage = i % kStages;
    const float scale_b = __ldg(b_scales + i);
    tma::wait_barrier(smem.full_barrier(stage), (i / kStages) & 1);
    const float* const token_scales = static_cast<const float*>(__cvta_shared_to_generic(smem.scale_slot(stage)));
    float2 scale_a[kTokens / 8];  // this thread's token pairs 8j + 2 (lane % 4), + 1
#pragma unroll
    for (int j = 0; j < kTokens / 8; ++j)
      scale_a[j] = *reinterpret_cast<const float2*>(token_scales + 8 * j + 2 * (lane % 4));
    const uint32_t weights = smem.weight_tile(stage), tokens = smem.token_tile(stage);
    ptx::wgmma_fence();
#pragma unroll
    for (int k_step = 0; k_step < kFp8SwapAbBlockK / 32; ++k_step) {
#pragma unroll
      for (int h = 0; h < kHalves; ++h)
        ptx::WgmmaE4m3<kTokens>::run(product[h],
                                     ptx::swizzled_128b_descriptor(weights + h * 64 * kFp8SwapAbBlockK + k_step * 32),
                                     ptx::swizzled_128b_descriptor(tokens + k_step * 32), k_step > 0);
    }
    ptx::wgmma_commit();
    ptx::wgmma_wait<0>();
#pragma unroll
    for (int h = 0; h < kHalves; ++h) ptx::fence_accumulators(product[h]);
    if (lane == 0) tma::arrive(smem.empty_barrier(stage));
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int j = 0; j < kAccumulators; ++j) {
        const float2 s = scale_a[j / 4];
        acc[h][j] += product[h][j] * (scale_b * ((j & 1) ? s.y : s.x));
      }
  }

  // K groups 1.. hand their sums to group 0 through the ring, idle once every group is past its last stage.
  float* const exchange = static_cast<float*>(__cvta_shared_to_generic(smem.ring)) + thread_in_group;
  tma::sync_named(kMathBarrier, kMathThreads);
  if (k_group > 0) {
    float* const mine = exchange + (k_group - 1) * Smem::kPartialFloats;
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int i = 0; i < kAccumulators; ++i) mine[(h * kAccumulators + i) * 128] = acc[h][i];
  }
  tma::sync_named(kMathBarrier, kMathThreads);
  if (k_group > 0) {
    pass_cluster_barriers();
    return;
  }
  for (int g = 1; g < kKGroups; ++g) {  // in group order: the same sums whatever the timing
    const float* const theirs = exchange + (g - 1) * Smem::kPartialFloats;
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int i = 0; i < kAccumulators; ++i) acc[h][i] += theirs[(h * kAccumulators + i) * 128];
  }

  if (p.splits > 1) {  // the ranges of one tile meet in the cluster's shared memory; rank 0 stores
    // Each thread's slots of the exchange hold its own K groups' sums only, so its range's sum may overwrite
    // them; the cluster barrier publishes them.
    if (split > 0) {
#pragma unroll
      for (int h = 0; h < kHalves; ++h)
#pragma unroll
        for (int i = 0; i < kAccumulators; ++i) exchange[(h * kAccumulators + i) * 128] = acc[h][i];
    }
    tma::sync_cluster();
    if (split == 0) {
      const uint32_t local = smem.ring + uint32_t(thread_in_group) * 4;
      for (int rank = 1; rank < p.splits; ++rank) {
        const uint32_t remote = tma::map_to_rank(local, rank);
        float pulled[kHalves][kAccumulators];  // every load in flight before the first add
#pragma unroll
        for (int h = 0; h < kHalves; ++h)
#pragma unroll
          for (int i = 0; i < kAccumulators; ++i)
            pulled[h][i] = accumulator_token(i) < p.m
                               ? tma::load_from_cluster(remote + uint32_t(h * kAccumulators + i) * 128 * 4)
                               : 0.0f;
#pragma unroll
        for (int h = 0; h < kHalves; ++h)
#pragma unroll
          for (int i = 0; i < kAccumulators; ++i) acc[h][i] += pulled[h][i];
      }
    }
    tma::sync_cluster();  // a CTA's shared memory outlives rank 0's reads of it
    if (split > 0) return;
  }
  store_transposed(acc, p, tile * kWeightRows);
}

}  // namespace shapescope::kernels::cuda
