// The tiled W4A16 kernel (a16w4_tiled, a16w4_tiled_grouped): C (bf16) = A (bf16) x dequant(B)^T with B FP4
// e2m1 in the layout of a16w4_tiled_config.hpp, on Hopper's wgmma, as the transposed product C^T = W x A^T.
//
// The weights are wgmma's A operand, from registers: each consumer thread loads its fragment's codes and block
// scales from global memory a few steps ahead of use, and turns them into the bf16 pairs of the m64k16 fragment
// (e2m1 bits shifted into bf16 position, times the block scale in bf16: exact, e2m1 x a power of two or
// e2m1 x ue4m3 having at most 6 significant bits) while the tensor cores multiply the previous step. The tokens
// are the B operand: a producer thread has the copy engine (TMA) bring each step's activation tile (K-major,
// 128-byte swizzle) into a ring of shared-memory stages, announced full and handed back empty through mbarriers,
// so no CTA-wide barrier runs in the K loop. The per-tensor scale multiplies the fp32 result, written transposed.
// With K split across CTAs the fp32 partials meet in a workspace that the last CTA of each tile writes out and
// leaves at zero.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/cuda/a16w4_tiled_config.hpp"
#include "kernels/cuda/hopper_ptx.cuh"
#include "kernels/cuda/hopper_tma.cuh"
#include "kernels/cuda/hopper_wgmma_bf16.cuh"

namespace shapescope::kernels::cuda::a16w4_tiled {

enum class ScaleCode { e8m0, ue4m3 };

// The rows of the output tile `unit` covers: its batch (expert), first layout row and rows (fewer than the
// tile at a group's end); false when the unit has none.
struct RowTile {
  int group = 0, first_row = 0, rows = 0;
};

template <int kBlockM>
__device__ __forceinline__ bool find_row_tile(const A16w4TiledParams& p, int unit, RowTile& tile) {
  if (p.groups == 0) {
    tile = {0, unit * kBlockM, min(kBlockM, p.m - unit * kBlockM)};
    return tile.rows > 0;
  }
  if (p.slot_rows > 0) {  // masked: slot_tiles units per group slot
    const int group = unit / p.slot_tiles, m_tile = unit % p.slot_tiles;
    const int rows = min(__ldg(p.group_rows + group), p.slot_rows);
    tile = {group, group * p.slot_rows + m_tile * kBlockM, min(kBlockM, rows - m_tile * kBlockM)};
    return tile.rows > 0;
  }
  int row = 0;
  for (int group = 0; group < p.groups; ++group) {
    const int rows = __ldg(p.group_rows + group), m_tiles = (rows + kBlockM - 1) / kBlockM;
    if (unit < m_tiles) {
      tile = {group, row + unit * kBlockM, min(kBlockM, rows - unit * kBlockM)};
      return true;
    }
    unit -= m_tiles;
    row += (rows + p.align - 1) / p.align * p.align;
  }
  return false;
}

// The code pairs come out of a16w4_tiled_code_pair as e2m1 x 2^-126 (bf16, 0.5 on a subnormal). ue4m3 scales
// are packed times 2^117 (a16w4_tiled_scale_bits), so that one multiply gives the weight x 2^-9, a normal bf16
// for every code pair and scale code (2^-19 .. 6 x 448 x 2^-9), and the epilogue multiplies the fp32 sums by 2^9:
// both exact, powers of two in range. e8m0 scales span more than bf16 could hold with such a factor, so their
// pairs take 2^126 back first.
template <ScaleCode kScale>
constexpr float kAccumulatorScale = kScale == ScaleCode::ue4m3 ? 0x1p9f : 1.0f;
constexpr uint32_t kRebias126 = 0x7E807E80u;  // 2^126 in both bf16 halves

__device__ __forceinline__ uint32_t multiply_bf16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.bf16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// Pair j of a code word times its block scale (a bf16x2 with both halves equal).
template <ScaleCode kScale>
__device__ __forceinline__ uint32_t dequantize_pair(uint32_t word, int pair, uint32_t scale) {
  uint32_t bits = a16w4_tiled_code_pair(word, pair);
  if constexpr (kScale == ScaleCode::e8m0) bits = multiply_bf16x2(bits, kRebias126);
  return multiply_bf16x2(bits, scale);
}

constexpr int kStages = kA16w4TiledActivationStages;
constexpr int kConsumerWarps = kA16w4TiledConsumerThreads / 32;

// The activation ring (tiles on 1024 bytes, the swizzle's period) and its barriers: `full` completes when the
// copy engine has delivered a stage, `empty` when every consumer warp's multiply of it has finished.
template <int kBlockM>
struct Ring {
  static constexpr uint32_t kTile = kBlockM * kA16w4TiledBlockK * 2;
  static_assert(kTile % 1024 == 0);
  uint32_t base, barriers;
  __device__ uint32_t tile(int stage) const { return base + stage * kTile; }
  __device__ uint32_t full(int stage) const { return barriers + stage * 8; }
  __device__ uint32_t empty(int stage) const { return barriers + (kStages + stage) * 8; }
};

// The producer: one thread of the producer warpgroup asks the copy engine for each step's activation tile (the
// tile's rows, columns col0 + 64 step on) into stage step % kStages once its last multiply has finished; the copy
// completes the stage's `full` barrier with its bytes. Rows past the tensor and columns past lda arrive as zeros;
// rows past a group's last (the next group's, or padding) are multiplied into token columns nothing writes.
template <int kBlockM>
__device__ __forceinline__ void produce(const CUtensorMap* activations, const RowTile& tile, int col0, int steps,
                                        const Ring<kBlockM>& ring) {
  tma::prefetch_tensor_map(activations);
  for (int step = 0; step < steps; ++step) {
    const int stage = step % kStages;
    if (step >= kStages) tma::wait_barrier(ring.empty(stage), (step / kStages - 1) & 1);
    tma::arrive_expect_bytes(ring.full(stage), Ring<kBlockM>::kTile);
    tma::load_tile_2d(ring.tile(stage), activations, col0 + step * kA16w4TiledBlockK, tile.first_row,
                      ring.full(stage));
  }
}

// One step's weights of a consumer thread: its quad lane's 8 bytes of codes of fragment rows r and r + 8, and
// their bf16 block scales.
struct StepWeights {
  uint2 codes[2];
  uint2 scales[2];  // bf16 scales of K 16s..16s + 15, s = 0..3: halves of x then of y
};

struct WeightSource {
  const uint8_t* codes;   // row r's 8 bytes at the CTA's first step
  const uint8_t* scales;  // row r's scales there
  int scale_bytes_per_row;
  int scale_step_bytes;
};

__device__ __forceinline__ void load_step_weights(const WeightSource& w, int step, int steps, StepWeights& out) {
  if (step >= steps) return;
  const uint8_t* codes = w.codes + int64_t(step) * kA16w4TiledCodeBytes;
  out.codes[0] = __ldg(reinterpret_cast<const uint2*>(codes));
  out.codes[1] = __ldg(reinterpret_cast<const uint2*>(codes + 8 * 32));
  const uint8_t* scales = w.scales + int64_t(step) * w.scale_step_bytes;
  if (w.scale_bytes_per_row == 8) {
    out.scales[0] = __ldg(reinterpret_cast<const uint2*>(scales));
    out.scales[1] = __ldg(reinterpret_cast<const uint2*>(scales + 8 * 8));
  } else {  // a scale per 32: each serves two 16s
    for (int r = 0; r < 2; ++r) {
      const uint32_t pair = __ldg(reinterpret_cast<const uint32_t*>(scales + 8 * 4 * r));
      out.scales[r] = make_uint2(__byte_perm(pair, 0, 0x1010), __byte_perm(pair, 0, 0x3232));
    }
  }
}

// A step's weights as the four m64k16 A fragments of its 64 K: fragment s, register h x 2 + r holds row r x 8
// at K 16s + 8h, pair 2 (s % 2) + h of the row's code word s / 2.
template <ScaleCode kScale>
__device__ __forceinline__ void dequantize_step(const StepWeights& w, uint32_t (&fragments)[4][4]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const uint32_t words[2] = {w.codes[r].x, w.codes[r].y};
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const uint32_t scale = __byte_perm(s < 2 ? w.scales[r].x : w.scales[r].y, 0, s % 2 ? 0x3232 : 0x1010);
#pragma unroll
      for (int h = 0; h < 2; ++h)
        fragments[s][2 * h + r] = dequantize_pair<kScale>(words[s / 2], 2 * (s % 2) + h, scale);
    }
  }
}

// Accumulator j of a consumer thread: weight row (output column) fragment_row + 8 ((j / 2) % 2) of the tile,
// token (output row) 8 (j / 4) + 2 (lane % 4) + j % 2.
__device__ __forceinline__ int fragment_row() {
  return int(threadIdx.x / 128 * 64 + threadIdx.x % 128 / 32 * 16 + threadIdx.x % 32 / 4);
}
__device__ __forceinline__ int accumulator_column(int j) { return fragment_row() + 8 * ((j / 2) % 2); }
__device__ __forceinline__ int accumulator_token(int j) { return 8 * (j / 4) + 2 * int(threadIdx.x % 4) + j % 2; }

__device__ __forceinline__ void store_pair(uint16_t* out, float v0, float v1, bool pair_fits, bool aligned) {
  if (pair_fits && aligned) {
    *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);
  } else {
    out[0] = __bfloat16_as_ushort(__float2bfloat16_rn(v0));
    if (pair_fits) out[1] = __bfloat16_as_ushort(__float2bfloat16_rn(v1));
  }
}

// Writes the accumulators, times `scale`, transposed into C: lanes of adjacent weight rows (quads 2q, 2q + 1)
// swap one value of each token pair, so each stores two adjacent columns of one token.
template <int kAccumulators>
__device__ __forceinline__ void store_transposed(const float (&accumulators)[kAccumulators], const A16w4TiledParams& p,
                                                 const RowTile& tile, int n0, float scale) {
  const bool even = threadIdx.x / 4 % 2 == 0;
  const bool aligned = p.n % 2 == 0;
#pragma unroll
  for (int j = 0; j < kAccumulators; j += 2) {
    const float received = __shfl_xor_sync(0xFFFFFFFFu, even ? accumulators[j + 1] : accumulators[j], 4);
    const int col = n0 + accumulator_column(j) - (even ? 0 : 1);
    const int token = accumulator_token(j) + (even ? 0 : 1);
    const float v0 = even ? accumulators[j] : received, v1 = even ? received : accumulators[j + 1];
    if (token < tile.rows && col < p.n)
      store_pair(p.c + (int64_t(tile.first_row) + token) * p.n + col, v0 * scale, v1 * scale, col + 1 < p.n,
                 aligned);
  }
}

// A launch's arguments: the parameters and the activations [rows][lda] bf16 (columns K..lda-1 zero) as a tensor map
// in boxes of kBlockM rows x 64 columns, in the 128-byte swizzle (a16w4_tiled_activation_map).
struct A16w4TiledArguments {
  A16w4TiledParams params;
  CUtensorMap activations;
};

// Grid: x the row tiles (units of find_row_tile; adjacent CTAs share a weight tile in L2), y the N tiles,
// z the K splits. Threads: two consumer warpgroups (weight rows 0-63, 64-127), then the producer warpgroup.
template <int kBlockM, ScaleCode kScale>
__global__ void __launch_bounds__(kA16w4TiledThreads, 1)
    a16w4_tiled_kernel(const __grid_constant__ A16w4TiledArguments arguments) {
  const A16w4TiledParams& p = arguments.params;
  constexpr int kAccumulators = kBlockM / 2;
  constexpr int kAhead = 8;  // steps of weights in registers ahead of the one dequantized
  extern __shared__ uint8_t shared_bytes[];
  __shared__ alignas(8) uint64_t barriers[2 * kStages];
  __shared__ unsigned arrived_before;
  const Ring<kBlockM> ring{(ptx::shared_address(shared_bytes) + 1023) & ~1023u, ptx::shared_address(barriers)};

  ptx::wait_for_previous_grid();
  ptx::allow_dependent_launch();
  RowTile tile;
  if (!find_row_tile<kBlockM>(p, int(blockIdx.x), tile)) return;  // the whole CTA: every thread found the same
  const int n_tile = int(blockIdx.y);
  const int begin = int(blockIdx.z) * p.steps_per_split;
  const int steps = min(p.steps_per_split, int(p.layout.k_steps) - begin);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      tma::init_barrier(ring.full(s), 1);
      tma::init_barrier(ring.empty(s), kConsumerWarps);
    }
    tma::fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x >= kA16w4TiledConsumerThreads) {
    tma::release_registers<40>();
    if (threadIdx.x == kA16w4TiledConsumerThreads)
      produce<kBlockM>(&arguments.activations, tile, begin * kA16w4TiledBlockK, steps, ring);
    return;
  }
  tma::claim_registers<232>();

  const int row = fragment_row(), quad_lane = int(threadIdx.x % 4);
  const int spr = p.layout.scale_bytes_per_row;
  const WeightSource weights{
      p.codes + tile.group * p.layout.code_bytes() + p.layout.code_offset(n_tile, begin) + row * 32 + quad_lane * 8,
      p.scales + tile.group * p.layout.scale_bytes() + p.layout.scale_offset(n_tile, begin) + row * spr, spr,
      p.layout.scale_step_bytes()};

  float accumulators[kAccumulators];
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) accumulators[i] = 0.0f;

  // ahead[i] holds the step congruent to i mod kAhead; fragments[step % 4] are dequantized two steps before
  // their multiply, into the buffer of the multiply two steps back once it has finished, so the warps turn codes
  // into bf16 while two steps' multiplies are queued on the tensor cores.
  StepWeights ahead[kAhead];
#pragma unroll
  for (int i = 0; i < kAhead; ++i) load_step_weights(weights, i, steps, ahead[i]);
  uint32_t fragments[4][4][4];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    dequantize_step<kScale>(ahead[i], fragments[i]);
    load_step_weights(weights, kAhead + i, steps, ahead[i]);
  }
  for (int base = 0; base < steps; base += kAhead) {
#pragma unroll
    for (int i = 0; i < kAhead; ++i) {
      const int step = base + i;
      if (step >= steps) continue;
      const int stage = step % kStages;
      tma::wait_barrier(ring.full(stage), (step / kStages) & 1);
      ptx::wgmma_fence();
#pragma unroll
      for (int s = 0; s < 4; ++s)
        ptx::WgmmaBf16RegisterA<kBlockM>::run(accumulators, fragments[i % 4][s],
                                              ptx::swizzled_128b_descriptor(ring.tile(stage) + s * 32), true);
      ptx::wgmma_commit();
      ptx::wgmma_wait<2>();  // two steps back has finished: its stage and its fragments are free
      if (step >= 2 && threadIdx.x % 32 == 0) tma::arrive(ring.empty((step - 2) % kStages));
      if (step + 2 < steps) {
        dequantize_step<kScale>(ahead[(i + 2) % kAhead], fragments[(i + 2) % 4]);
        load_step_weights(weights, step + 2 + kAhead, steps, ahead[(i + 2) % kAhead]);
      }
    }
  }
  ptx::wgmma_wait<0>();
  ptx::fence_accumulators(accumulators);

  const float scale = __ldg(p.tensor_scales + tile.group) * kAccumulatorScale<kScale>;
  const int n0 = n_tile * kA16w4TiledBlockN;
  if (gridDim.z == 1) {
    store_transposed(accumulators, p, tile, n0, scale);
    return;
  }
  float* partials = p.partials + int64_t(tile.first_row) * p.n + n0;
#pragma unroll
  for (int j = 0; j < kAccumulators; ++j) {
    const int token = accumulator_token(j), col = accumulator_column(j);
    if (token < tile.rows && n0 + col < p.n) atomicAdd(partials + int64_t(token) * p.n + col, accumulators[j]);
  }
  __threadfence();
  tma::sync_named(1, kA16w4TiledConsumerThreads);
  unsigned* arrivals = p.arrivals + int64_t(blockIdx.x) * gridDim.y + blockIdx.y;
  if (threadIdx.x == 0) arrived_before = atomicAdd(arrivals, 1u);
  tma::sync_named(1, kA16w4TiledConsumerThreads);
  if (arrived_before != gridDim.z - 1) return;
  __threadfence();  // every other CTA's sums are visible (they fenced before arriving)
#pragma unroll
  for (int j = 0; j < kAccumulators; ++j) {
    const int token = accumulator_token(j), col = accumulator_column(j);
    if (token >= tile.rows || n0 + col >= p.n) continue;
    float* at = partials + int64_t(token) * p.n + col;
    accumulators[j] = __ldcg(at);
    __stcg(at, 0.0f);
  }
  store_transposed(accumulators, p, tile, n0, scale);
  if (threadIdx.x == 0) *arrivals = 0;
}

}  // namespace shapescope::kernels::cuda::a16w4_tiled
