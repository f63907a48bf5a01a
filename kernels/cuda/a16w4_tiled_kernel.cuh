// The tiled W4A16 kernel (a16w4_tiled, a16w4_tiled_grouped): C (bf16) = A (bf16) x dequant(B)^T with B FP4
// e2m1 in the layout of a16w4_tiled_config.hpp, on Hopper's wgmma.
//
// Each CTA (two warpgroups) walks its K range 64 at a time through two rings of stages that cp.async fills: the
// activation tiles (rows of 128 bytes in the 128-byte swizzle wgmma reads) and, further ahead, the steps' codes
// and scale codes. The CTA's threads turn one step's codes into a bf16 tile in that same swizzled K-major layout while
// the tensor cores multiply the previous step's tile: e2m1 to bf16 through a byte-permute table, times the
// block scale in bf16, which is exact (e2m1 x a power of two; e2m1 x ue4m3 has at most 6 significant bits).
// The per-tensor scale multiplies the fp32 result. With K split across CTAs the fp32 partials meet in a
// workspace that the last CTA of each tile writes out and leaves at zero.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/cuda/a16w4_tiled_config.hpp"
#include "kernels/cuda/hopper_ptx.cuh"
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

// bf16 bits of a scale code (exact: e8m0 is a power of two, ue4m3 has 4 significant bits).
template <ScaleCode kScale>
__device__ __forceinline__ uint32_t scale_bf16(uint32_t code) {
  if constexpr (kScale == ScaleCode::e8m0) {
    return code == 0 ? 0x0040u : code << 7;  // 2^(code - 127); code 0 is the bf16 subnormal 2^-127
  } else {
    if (code >> 3) return (code << 4) + (120u << 7);  // exponent code - 7 + 127, mantissa 3 bits
    return __bfloat16_as_ushort(__float2bfloat16_rn(float(code & 7) * 0x1p-9f));  // subnormal ue4m3
  }
}

__device__ __forceinline__ uint32_t multiply_bf16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.bf16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// The 8 e2m1 codes of `word` (code j in bits 4j..4j+3) as 4 bf16 pairs (code 2i in the low half of pair i),
// times `scale` (a bf16x2 with both halves equal). The magnitude (3 bits) indexes a byte-permute table of the
// bf16 bytes of 0, 0.5, 1, 1.5, 2, 3, 4, 6; the sign bit moves to the top of its half.
__device__ __forceinline__ uint4 dequantize_8(uint32_t word, uint32_t scale) {
  constexpr uint32_t kHigh0 = 0x3F3F3F00u, kHigh1 = 0x40404040u;  // high bytes of magnitudes 0..3, 4..7
  constexpr uint32_t kLow0 = 0xC0800000u, kLow1 = 0xC0804000u;    // low bytes
  const uint32_t magnitudes = word & 0x77777777u;  // a selector nibble's top bit would replicate a sign
  const uint32_t high_first = __byte_perm(kHigh0, kHigh1, magnitudes);
  const uint32_t low_first = __byte_perm(kLow0, kLow1, magnitudes);
  const uint32_t high_last = __byte_perm(kHigh0, kHigh1, magnitudes >> 16);
  const uint32_t low_last = __byte_perm(kLow0, kLow1, magnitudes >> 16);
  uint32_t pairs[4] = {__byte_perm(low_first, high_first, 0x5140), __byte_perm(low_first, high_first, 0x7362),
                       __byte_perm(low_last, high_last, 0x5140), __byte_perm(low_last, high_last, 0x7362)};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    // Code 2i's sign (bit 8i + 3) to bit 15, code 2i + 1's (bit 8i + 7) to bit 31.
    const uint32_t byte = word >> (8 * i);
    const uint32_t signs = ((byte << 12) & 0x8000u) | ((byte << 24) & 0x80000000u);
    pairs[i] = multiply_bf16x2(pairs[i] | signs, scale);
  }
  return make_uint4(pairs[0], pairs[1], pairs[2], pairs[3]);
}

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of 128-byte rows in the 128-byte swizzle.
__device__ __forceinline__ uint32_t swizzled(int row, int chunk) {
  return uint32_t(row * 128 + ((chunk ^ (row & 7)) << 4));
}

template <int kBlockM>
struct SharedLayout {
  static constexpr int kActivationStages = kA16w4TiledActivationStages;
  static constexpr int kWeightStages = a16w4_tiled_weight_stages(kBlockM);
  static constexpr uint32_t kWeightTile = kA16w4TiledBlockN * kA16w4TiledBlockK * 2;  // bf16
  static constexpr uint32_t kActivationTile = kBlockM * kA16w4TiledBlockK * 2;
  // Every tile wgmma reads starts on 1024 bytes (the swizzle's period).
  static_assert(kWeightTile % 1024 == 0 && kActivationTile % 1024 == 0);
  uint32_t base;
  __device__ uint32_t weights(int buffer) const { return base + buffer * kWeightTile; }
  __device__ uint32_t activations(int stage) const { return base + 2 * kWeightTile + stage * kActivationTile; }
  __device__ uint32_t codes(int stage) const {
    return activations(kActivationStages) + stage * kA16w4TiledWeightStageBytes;
  }
  __device__ uint32_t scales(int stage) const { return codes(stage) + kA16w4TiledCodeBytes; }
};

// Where step `step` of a CTA's K range comes from: its activation columns start at col0 + 64 step, its codes
// and scales at `codes` and `scales` + step x their bytes a step.
struct StageSource {
  const uint16_t* a;      // the tile's first row, column 0
  int rows;
  int64_t col0;           // the first column of the CTA's K range
  int64_t lda;
  const uint8_t* codes;   // the CTA's first step of its N tile
  const uint8_t* scales;
  int scale_step_bytes;
};

template <int kBlockM>
__device__ __forceinline__ void load_activations(const StageSource& s, const SharedLayout<kBlockM>& smem, int step,
                                                 int stage) {
  for (int i = int(threadIdx.x); i < kBlockM * 8; i += kA16w4TiledThreads) {
    const int row = i / 8, chunk = i % 8;
    const int64_t col = s.col0 + int64_t(step) * kA16w4TiledBlockK + chunk * 8;
    const bool valid = row < s.rows && col < s.lda;
    ptx::copy_16_async(smem.activations(stage) + swizzled(row, chunk), valid ? s.a + row * s.lda + col : s.a, valid);
  }
}

template <int kBlockM>
__device__ __forceinline__ void load_weights(const StageSource& s, const SharedLayout<kBlockM>& smem, int step,
                                             int stage) {
  const int thread = threadIdx.x;
  ptx::copy_16_async(smem.codes(stage) + thread * 16, s.codes + int64_t(step) * kA16w4TiledCodeBytes + thread * 16,
                     true);
  if (thread * 16 < s.scale_step_bytes)
    ptx::copy_16_async(smem.scales(stage) + thread * 16, s.scales + int64_t(step) * s.scale_step_bytes + thread * 16,
                       true);
}

// One step's codes (stage) to the bf16 weight tile (buffer): 1024 runs of 8 K, four a thread.
template <ScaleCode kScale, int kBlockM>
__device__ __forceinline__ void dequantize_stage(const SharedLayout<kBlockM>& smem, int stage, int buffer,
                                                 int scale_bytes_per_row) {
#pragma unroll
  for (int j = 0; j < kA16w4TiledBlockN * 8 / kA16w4TiledThreads; ++j) {
    const int run = int(threadIdx.x) + j * kA16w4TiledThreads, row = run / 8, chunk = run % 8;
    uint32_t word, code;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(word) : "r"(smem.codes(stage) + row * 32 + chunk * 4));
    asm volatile("ld.shared.u8 %0, [%1];\n"
                 : "=r"(code)
                 : "r"(smem.scales(stage) + row * scale_bytes_per_row + chunk * scale_bytes_per_row / 8));
    const uint32_t scale = scale_bf16<kScale>(code);
    const uint4 values = dequantize_8(word, scale | scale << 16);
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(smem.weights(buffer) + swizzled(row, chunk)),
                 "r"(values.x), "r"(values.y), "r"(values.z), "r"(values.w)
                 : "memory");
  }
}

// Each warpgroup's share of the tile: 128-row tiles, rows 64 x warpgroup over all 128 columns; 64-row tiles,
// all rows over columns 64 x warpgroup.
template <int kBlockM>
struct WarpgroupShare {
  static constexpr int kColumns = kBlockM == 128 ? 128 : 64;
  static constexpr int kAccumulators = kColumns / 2;
  __device__ static int row0(int warpgroup) { return kBlockM == 128 ? 64 * warpgroup : 0; }
  __device__ static int col0(int warpgroup) { return kBlockM == 128 ? 0 : 64 * warpgroup; }
};

// Visits each pair of adjacent output columns the thread holds: (row in tile, column in tile, accumulator).
template <int kBlockM, class Visit>
__device__ __forceinline__ void each_pair(const Visit& visit) {
  using Share = WarpgroupShare<kBlockM>;
  const int warpgroup = threadIdx.x / 128, warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int j = 0; j < Share::kAccumulators; j += 2) {
    const int row = Share::row0(warpgroup) + warp * 16 + lane / 4 + 8 * ((j / 2) % 2);
    const int col = Share::col0(warpgroup) + (j / 4) * 8 + (lane % 4) * 2;
    visit(row, col, j);
  }
}

__device__ __forceinline__ void store_pair(uint16_t* out, float v0, float v1, bool pair_fits, bool aligned) {
  if (pair_fits && aligned) {
    *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);
  } else {
    out[0] = __bfloat16_as_ushort(__float2bfloat16_rn(v0));
    if (pair_fits) out[1] = __bfloat16_as_ushort(__float2bfloat16_rn(v1));
  }
}

// Grid: x the row tiles (units of find_row_tile; adjacent CTAs share a weight tile in L2), y the N tiles,
// z the K splits.
template <int kBlockM, ScaleCode kScale>
__global__ void __launch_bounds__(kA16w4TiledThreads, 2) a16w4_tiled_kernel(const A16w4TiledParams p) {
  using Share = WarpgroupShare<kBlockM>;
  constexpr int kActivationStages = SharedLayout<kBlockM>::kActivationStages;
  constexpr int kWeightStages = SharedLayout<kBlockM>::kWeightStages;
  extern __shared__ uint8_t shared_bytes[];
  __shared__ unsigned arrived_before;
  const SharedLayout<kBlockM> smem{(ptx::shared_address(shared_bytes) + 1023) & ~1023u};

  ptx::wait_for_previous_grid();
  ptx::allow_dependent_launch();
  RowTile tile;
  if (!find_row_tile<kBlockM>(p, int(blockIdx.x), tile)) return;  // the whole CTA: every thread found the same
  const int n_tile = int(blockIdx.y);
  const int begin = int(blockIdx.z) * p.steps_per_split;
  const int steps = min(p.steps_per_split, int(p.layout.k_steps) - begin);
  const StageSource source{p.a + int64_t(tile.first_row) * p.lda,
                           tile.rows,
                           int64_t(begin) * kA16w4TiledBlockK,
                           p.lda,
                           p.codes + tile.group * p.layout.code_bytes() + p.layout.code_offset(n_tile, begin),
                           p.scales + tile.group * p.layout.scale_bytes() + p.layout.scale_offset(n_tile, begin),
                           p.layout.scale_step_bytes()};
  const int warpgroup = threadIdx.x / 128;

  float accumulators[Share::kAccumulators];
#pragma unroll
  for (int i = 0; i < Share::kAccumulators; ++i) accumulators[i] = 0.0f;

  // All copy groups are committed by every thread in the same order, one per step after the first; a step's
  // weights are waited for before its dequantization (a step ahead of its multiply), its activations only
  // before its multiply.
  for (int s = 0; s < kActivationStages - 1 && s < steps; ++s) load_activations<kBlockM>(source, smem, s, s);
  for (int s = 0; s < kWeightStages && s < steps; ++s) load_weights<kBlockM>(source, smem, s, s);
  ptx::commit_async_copies();
  ptx::wait_async_copies<0>();
  __syncthreads();
  dequantize_stage<kScale>(smem, 0, 0, p.layout.scale_bytes_per_row);
  ptx::fence_generic_to_async_proxy();
  __syncthreads();

  for (int step = 0; step < steps; ++step) {
    const int buffer = step % 2;
    ptx::wgmma_fence();
#pragma unroll
    for (int k = 0; k < kA16w4TiledBlockK / 16; ++k) {
      const uint32_t a = smem.activations(step % kActivationStages) + Share::row0(warpgroup) * 128 + k * 32;
      const uint32_t b = smem.weights(buffer) + Share::col0(warpgroup) * 128 + k * 32;
      ptx::WgmmaBf16<Share::kColumns>::run(accumulators, ptx::swizzled_128b_descriptor(a),
                                           ptx::swizzled_128b_descriptor(b), true);
    }
    ptx::wgmma_commit();
    // The activation stage refilled held step - 1 (its multiply finished before the last barrier); the weight
    // stage held `step`, dequantized before it.
    const int next_activations = step + kActivationStages - 1, next_weights = step + kWeightStages;
    if (next_activations < steps)
      load_activations<kBlockM>(source, smem, next_activations, next_activations % kActivationStages);
    if (next_weights < steps) load_weights<kBlockM>(source, smem, next_weights, next_weights % kWeightStages);
    ptx::commit_async_copies();  // group `step`: step + 1's weights are in group step + 1 - kWeightStages or older
    if (step + 1 < steps) {
      ptx::wait_async_copies<kWeightStages - 1>();  // this thread's copies of step + 1's weights have landed
      __syncthreads();                                // and everyone's
      dequantize_stage<kScale>(smem, (step + 1) % kWeightStages, (step + 1) % 2, p.layout.scale_bytes_per_row);
    }
    ptx::wait_async_copies<kActivationStages - 2>();  // step + 1's activations (group step + 2 - kActivationStages)
    ptx::fence_generic_to_async_proxy();              // the dequantized tile and the activations, for wgmma
    ptx::wgmma_wait<0>();
    ptx::fence_accumulators(accumulators);
    __syncthreads();
  }

  const float scale = __ldg(p.tensor_scales + tile.group);
  const int n0 = n_tile * kA16w4TiledBlockN;
  const bool aligned = p.n % 2 == 0;
  uint16_t* c = p.c + int64_t(tile.first_row) * p.n + n0;
  if (gridDim.z == 1) {
    each_pair<kBlockM>([&](int row, int col, int j) {
      if (row < tile.rows && n0 + col < p.n)
        store_pair(c + int64_t(row) * p.n + col, accumulators[j] * scale, accumulators[j + 1] * scale,
                   n0 + col + 1 < p.n, aligned);
    });
    return;
  }
  float* partials = p.partials + int64_t(tile.first_row) * p.n + n0;
  each_pair<kBlockM>([&](int row, int col, int j) {
    if (row >= tile.rows || n0 + col >= p.n) return;
    float* at = partials + int64_t(row) * p.n + col;
    atomicAdd(at, accumulators[j]);
    if (n0 + col + 1 < p.n) atomicAdd(at + 1, accumulators[j + 1]);
  });
  __threadfence();
  __syncthreads();
  unsigned* arrivals = p.arrivals + int64_t(blockIdx.x) * gridDim.y + blockIdx.y;
  if (threadIdx.x == 0) arrived_before = atomicAdd(arrivals, 1u);
  __syncthreads();
  if (arrived_before != gridDim.z - 1) return;
  __threadfence();  // every other CTA's sums are visible (they fenced before arriving)
  each_pair<kBlockM>([&](int row, int col, int) {
    if (row >= tile.rows || n0 + col >= p.n) return;
    float* at = partials + int64_t(row) * p.n + col;
    const bool pair_fits = n0 + col + 1 < p.n;
    const float v0 = __ldcg(at), v1 = pair_fits ? __ldcg(at + 1) : 0.0f;
    store_pair(c + int64_t(row) * p.n + col, v0 * scale, v1 * scale, pair_fits, aligned);
    __stcg(at, 0.0f);
    if (pair_fits) __stcg(at + 1, 0.0f);
  });
  if (threadIdx.x == 0) *arrivals = 0;
}

}  // namespace shapescope::kernels::cuda::a16w4_tiled
