// The W4A16 main loop shared by a16w4_blockscale (dense) and a16w4_blockscale_grouped: FP4 weights streamed
// from memory in the layout of a16w4_layout.hpp through a ring of kA16w4Stages chunks per warp in shared memory
// (cp.async, each lane copying and later reading back only its own words, so no barrier: kA16w4Stages - 1
// chunks in flight while one is multiplied), dequantized in registers to bf16 with the block scale folded in,
// multiplied by bf16 activations with mma.sync m16n8k16 into fp32 accumulators. The activations are small at
// the M this is for (decode, 1..16 rows) and come through L1, shared by the warps of a CTA that walk the same K.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "kernels/cuda/a16w4_blockscale_config.hpp"
#include "kernels/cuda/a16w4_layout.hpp"
#include "kernels/cuda/hopper_ptx.cuh"

namespace shapescope::kernels::cuda::a16w4 {

enum class ScaleCode { e8m0, ue4m3 };

// What a warp multiplies: rows [m0, m0 + 16) of A (bf16, row-major, `lda` elements a row, `m` rows, `k`
// columns) by one warp tile of packed weights over chunks begin, begin + stride, ... < end.
struct WarpWork {
  const uint16_t* a;
  int64_t lda;
  int m, k;
  bool a_vectors;       // K and the row stride are multiples of 8: 16-byte activation loads
  const uint4* weights;     // this warp tile's chunk 0, n8 tile 0 (A16w4Layout::weight_word / 4)
  const uint32_t* scales;   // this warp tile's chunk 0, n8 tile 0 (A16w4Layout::scale_word)
  int64_t chunk_scales;     // words from one chunk to the next
  int scale_words_per_row;
  int m0;
  int begin, end, stride;
};

__device__ __forceinline__ uint32_t multiply_bf16x2(uint32_t a, uint32_t b) {
  uint32_t d;
  asm("mul.rn.bf16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
  return d;
}

// The eight elements of a lane's word (a16w4_layout.hpp) as four bf16 pairs (elements 2p, 2p + 1) times
// `multiplier`, the block scale folded into bf16.
__device__ __forceinline__ void dequantize_word(uint32_t word, uint32_t multiplier, uint32_t (&pairs)[4]) {
  pairs[0] = multiply_bf16x2(a16w4_e2m1_pair<0>(word), multiplier);
  pairs[1] = multiply_bf16x2(a16w4_e2m1_pair<1>(word), multiplier);
  pairs[2] = multiply_bf16x2(a16w4_e2m1_pair<2>(word), multiplier);
  pairs[3] = multiply_bf16x2(a16w4_e2m1_pair<3>(word), multiplier);
}

// The four bf16x2 multipliers (both halves equal) of the four scale codes in `codes`, one per sub-chunk:
// scale x 2^(126 - offset), exact (a16w4_layout.hpp).
template <ScaleCode kScale>
__device__ __forceinline__ void scale_multipliers(uint32_t codes, uint32_t (&multipliers)[4]) {
  if constexpr (kScale == ScaleCode::e8m0) {
    // 2^(code - 127 + 126 - 63): bf16 exponent field code + 63, per byte without carries (code <= 191).
    const uint32_t fields = codes + 0x3F3F3F3Fu;
    multipliers[0] = __byte_perm(fields, 0, 0x4040) << 7;
    multipliers[1] = __byte_perm(fields, 0, 0x4141) << 7;
    multipliers[2] = __byte_perm(fields, 0, 0x4242) << 7;
    multipliers[3] = __byte_perm(fields, 0, 0x4343) << 7;
  } else {
    // Two codes at a time to an f16 pair (exact: every e4m3 value is a normal f16 with three mantissa bits),
    // whose bits shifted right by 3 are the bf16 pair of scale x 2^-112, then times 2^127 and 2^102 (exact):
    // scale x 2^(126 - kUe4m3ScaleOffset) in four operations, where through fp32 it took six.
    static_assert(126 - kUe4m3ScaleOffset == -112 + 127 + 102);
    constexpr uint32_t kTimes2To127 = 0x7F007F00u, kTimes2To102 = 0x72807280u;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const __half2_raw scales = __nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(codes >> (16 * half)), __NV_E4M3);
      const uint32_t bits = uint32_t(scales.x) | uint32_t(scales.y) << 16;
      const uint32_t pair = multiply_bf16x2(multiply_bf16x2(bits >> 3, kTimes2To127), kTimes2To102);
      multipliers[2 * half] = __byte_perm(pair, 0, 0x1010);
      multipliers[2 * half + 1] = __byte_perm(pair, 0, 0x3232);
    }
  }
}

// 8 activations of row `row` from column `col` one by one, zeros past K (a K or row stride that is no multiple
// of 8, or the last chunk): kept out of line, so the vector path keeps its registers.
static __device__ __noinline__ uint4 load_activations_one_by_one(const uint16_t* source, int count) {
  uint16_t values[8] = {};
  for (int j = 0; j < 8 && j < count; ++j) values[j] = __ldg(source + j);
  return make_uint4(values[0] | uint32_t(values[1]) << 16, values[2] | uint32_t(values[3]) << 16,
                    values[4] | uint32_t(values[5]) << 16, values[6] | uint32_t(values[7]) << 16);
}

// 8 activations of row `row` from column `col` (zeros past M or K).
__device__ __forceinline__ uint4 load_activations(const WarpWork& w, int row, int col) {
  if (row >= w.m || col >= w.k) return make_uint4(0, 0, 0, 0);
  const uint16_t* source = w.a + int64_t(row) * w.lda + col;
  if (w.a_vectors && col + 8 <= w.k) return __ldg(reinterpret_cast<const uint4*>(source));
  return load_activations_one_by_one(source, w.k - col);
}

// One chunk's weights and scales of one lane, read back from the ring.
struct ChunkWeights {
  uint4 weights[kA16w4TilesPerWarp];
  uint32_t scales[kA16w4TilesPerWarp];
};

// A warp's ring in shared memory: [stage][n8 tile][lane], the order of the global layout, so the 16-byte reads
// of a warp are contiguous (no bank conflicts). One bulk copy a chunk by lane 0 into an mbarrier-tracked ring
// measured 7-9% slower on the H100 (2026-11-25) than these per-lane copies.
struct WarpRing {
  uint4 weights[kA16w4Stages][kA16w4TilesPerWarp][32];
  uint32_t scales[kA16w4Stages][kA16w4TilesPerWarp][32];
};

__device__ __forceinline__ void copy_4_async(void* shared_destination, const void* global_source) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(ptx::shared_address(shared_destination)),
               "l"(global_source)
               : "memory");
}

// uint4 from one chunk of a warp tile's weights to the next (a16w4_layout.hpp).
constexpr int kChunkWeights = kA16w4WordsPerTileChunk / 4 * kA16w4TilesPerWarp;

// Starts the copy of the lane's words of `chunk` into `stage` of the ring (weights bypass L1: streamed once).
__device__ __forceinline__ void fetch_chunk(const WarpWork& w, int chunk, int lane, WarpRing& ring, int stage) {
  const int group = lane / 4, quad = lane % 4;
  const uint4* weights = w.weights + chunk * kChunkWeights + lane;
  const uint32_t* scales =
      w.scales + chunk * w.chunk_scales + group * w.scale_words_per_row + (w.scale_words_per_row == 2 ? quad / 2 : 0);
#pragma unroll
  for (int t = 0; t < kA16w4TilesPerWarp; ++t) {
    ptx::copy_16_async(ptx::shared_address(&ring.weights[stage][t][lane]), weights + t * 32, true);
    copy_4_async(&ring.scales[stage][t][lane], scales + t * 8 * w.scale_words_per_row);
  }
}

// Puts the warp's first kA16w4Stages - 1 chunks in flight (one commit group each, empty past the end). Reads
// only the weights, which nothing writes while kernels run: the dense kernel calls it before waiting for the
// previous grid, so the first DRAM round trip overlaps that grid's tail.
__device__ __forceinline__ void start_warp_tile(const WarpWork& w, WarpRing& ring) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int s = 0; s < kA16w4Stages - 1; ++s) {
    const int chunk = w.begin + s * w.stride;
    if (chunk < w.end) fetch_chunk(w, chunk, lane, ring, s);
    ptx::commit_async_copies();
  }
}

// The lane's activations of one chunk: [row group, +8][sub-chunk], 8 K each.
template <bool kTwoRowGroups>
struct ChunkActivations {
  uint4 rows[kTwoRowGroups ? 2 : 1][4];
};

// Rows past M read row M - 1 instead: they feed only output rows that are never stored, and so no lane of a warp
// branches apart. A chunk wholly inside K with 16-byte rows (every chunk but a partial last one) takes its four
// loads a row from one address, with no bounds check a load.
template <bool kTwoRowGroups>
__device__ __forceinline__ void load_activations(const WarpWork& w, int chunk, int lane,
                                                 ChunkActivations<kTwoRowGroups>& o) {
  const int group = lane / 4, col = chunk * kA16w4ChunkK + 8 * (lane % 4);
  const bool whole = w.a_vectors && (chunk + 1) * kA16w4ChunkK <= w.k;
#pragma unroll
  for (int r = 0; r < (kTwoRowGroups ? 2 : 1); ++r) {
    const int row = min(w.m0 + group + 8 * r, w.m - 1);
    if (whole) {
      const uint4* source = reinterpret_cast<const uint4*>(w.a + int64_t(row) * w.lda + col);
#pragma unroll
      for (int s = 0; s < 4; ++s) o.rows[r][s] = __ldg(source + 4 * s);
    } else {
#pragma unroll
      for (int s = 0; s < 4; ++s) o.rows[r][s] = load_activations(w, row, col + 32 * s);
    }
  }
}

// Sub-chunk by sub-chunk, the four n8 tiles side by side: consecutive mma.sync go to different accumulators,
// so each waits on its own previous mma only, not on a chain of one tile's eight (with the 8-row activations a
// chunk ahead, 2% faster over the Llama-3.3-70B decode points on the H100, 2026-11-25).
//   Sixteen rows: the activations are the 16-row A side, each n8 tile of weights the B side.
//   Eight rows: the operands trade places, C^T = B A^T: two n8 tiles of weights are the 16-row A side and the
// activations the n8 B side, so no mma multiplies rows 8..15 of zeros and a chunk takes 16 mma, not 32.
// accumulators[p][e] then hold tile 2p + e / 2, weight row `group`, activation row 2 quad + e % 2.
template <ScaleCode kScale, bool kTwoRowGroups>
__device__ __forceinline__ void multiply_chunk(const ChunkWeights& b, const ChunkActivations<kTwoRowGroups>& a,
                                               float (&accumulators)[kA16w4TilesPerWarp][4]) {
  uint32_t multipliers[kA16w4TilesPerWarp][4];
#pragma unroll
  for (int t = 0; t < kA16w4TilesPerWarp; ++t) scale_multipliers<kScale>(b.scales[t], multipliers[t]);
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    uint32_t pairs[kA16w4TilesPerWarp][4];
#pragma unroll
    for (int t = 0; t < kA16w4TilesPerWarp; ++t) {
      const uint4& words = b.weights[t];
      dequantize_word(s == 0 ? words.x : s == 1 ? words.y : s == 2 ? words.z : words.w, multipliers[t][s], pairs[t]);
    }
    const uint4 top = a.rows[0][s];
    if constexpr (kTwoRowGroups) {
      const uint4 bottom = a.rows[1][s];
      const uint32_t a_low[4] = {top.x, bottom.x, top.y, bottom.y};
      const uint32_t a_high[4] = {top.z, bottom.z, top.w, bottom.w};
#pragma unroll
      for (int t = 0; t < kA16w4TilesPerWarp; ++t) {
        const uint32_t b_low[2] = {pairs[t][0], pairs[t][1]};
        ptx::mma_bf16_16x8x16(accumulators[t], a_low, b_low);
      }
#pragma unroll
      for (int t = 0; t < kA16w4TilesPerWarp; ++t) {
        const uint32_t b_high[2] = {pairs[t][2], pairs[t][3]};
        ptx::mma_bf16_16x8x16(accumulators[t], a_high, b_high);
      }
    } else {
      const uint32_t activations_low[2] = {top.x, top.y}, activations_high[2] = {top.z, top.w};
#pragma unroll
      for (int p = 0; p < kA16w4TilesPerWarp / 2; ++p) {
        const uint32_t weights_low[4] = {pairs[2 * p][0], pairs[2 * p + 1][0], pairs[2 * p][1], pairs[2 * p + 1][1]};
        ptx::mma_bf16_16x8x16(accumulators[p], weights_low, activations_low);
      }
#pragma unroll
      for (int p = 0; p < kA16w4TilesPerWarp / 2; ++p) {
        const uint32_t weights_high[4] = {pairs[2 * p][2], pairs[2 * p + 1][2], pairs[2 * p][3], pairs[2 * p + 1][3]};
        ptx::mma_bf16_16x8x16(accumulators[p], weights_high, activations_high);
      }
    }
  }
}

// accumulators += the warp's product (laid out as multiply_chunk says), after start_warp_tile(w, ring).
// kTwoRowGroups false: rows m0 + 8.. are not read (at most 8 rows). Each chunk read from the ring frees the
// stage read one chunk earlier, which takes the chunk kA16w4Stages - 1 ahead.
template <ScaleCode kScale, bool kTwoRowGroups>
__device__ __forceinline__ void multiply_warp_tile(const WarpWork& w, WarpRing& ring,
                                                   float (&accumulators)[kA16w4TilesPerWarp][4]) {
  const int lane = threadIdx.x % 32;
  // Eight rows: the next chunk's activations (L1 or L2) load while this one is multiplied; past K they are
  // zeros, read from nowhere, and past the end of the split real columns, loaded and never used. Sixteen rows
  // load their own at the top of the chunk (a second set would not fit the 128 registers of four CTAs an SM).
  constexpr bool kActivationsAhead = !kTwoRowGroups;
  ChunkActivations<kTwoRowGroups> activations;
  if constexpr (kActivationsAhead) load_activations(w, w.begin, lane, activations);
  int stage = 0;
  for (int chunk = w.begin; chunk < w.end; chunk += w.stride) {
    if constexpr (!kActivationsAhead) load_activations(w, chunk, lane, activations);
    ptx::wait_async_copies<kA16w4Stages - 2>();  // this chunk's group has landed
    ChunkWeights current;
#pragma unroll
    for (int t = 0; t < kA16w4TilesPerWarp; ++t) {
      current.weights[t] = ring.weights[stage][t][lane];
      current.scales[t] = ring.scales[stage][t][lane];
    }
    const int ahead = chunk + (kA16w4Stages - 1) * w.stride;
    const int free_stage = stage == 0 ? kA16w4Stages - 1 : stage - 1;  // read into registers a chunk ago
    if (ahead < w.end) fetch_chunk(w, ahead, lane, ring, free_stage);
    ptx::commit_async_copies();
    ChunkActivations<kTwoRowGroups> next;
    if constexpr (kActivationsAhead) load_activations(w, chunk + w.stride, lane, next);
    multiply_chunk<kScale>(current, activations, accumulators);
    if constexpr (kActivationsAhead) activations = next;
    stage = stage == kA16w4Stages - 1 ? 0 : stage + 1;
  }
  ptx::wait_async_copies<0>();  // nothing left in flight into the ring
}

// A persistent warp's run: units [first, last) of the whole product in the order of the packed weights, unit u
// being chunk u % chunks of warp tile (u / chunks) % warp_tiles at M tile u / tile_units (a16w4_layout.hpp lays
// a warp tile's chunks one after the other, so unit u of an M tile is chunk u of WarpWork::weights of tile 0).
// The ring runs on across tile boundaries: the first DRAM round trip is paid once a run, not once a tile.
struct WarpRun {
  int first, last;
  int chunks;      // K chunks, the units of one warp tile
  int tile_units;  // warp tiles x chunks, the units of one M tile
  int rows;        // M rows a tile (8 or 16)

  __device__ __forceinline__ int chunk(int unit) const { return unit % chunks; }
  __device__ __forceinline__ int m0(int unit) const { return unit / tile_units * rows; }
};

// Puts the run's first kA16w4Stages - 1 units in flight, as start_warp_tile does for a warp tile.
__device__ __forceinline__ void start_warp_run(const WarpWork& w, const WarpRun& run, WarpRing& ring) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int s = 0; s < kA16w4Stages - 1; ++s) {
    const int unit = run.first + s;
    if (unit < run.last) fetch_chunk(w, unit % run.tile_units, lane, ring, s);
    ptx::commit_async_copies();
  }
}

// The run's units multiplied as multiply_warp_tile does (after start_warp_run); at the last unit of each tile,
// or of the run, finish(accumulators, tile, first unit, end unit) takes the tile's piece (tile counted over
// the M tiles: unit / chunks) while the ring keeps the next units in flight, and the accumulators start again
// from zero. `w` gives A, K and the tile-0 weights; its m0 and chunk range are the run's.
template <ScaleCode kScale, bool kTwoRowGroups, class Finish>
__device__ __forceinline__ void multiply_warp_run(WarpWork w, const WarpRun& run, WarpRing& ring,
                                                  const Finish& finish) {
  const int lane = threadIdx.x % 32;
  float accumulators[kA16w4TilesPerWarp][4] = {};
  constexpr bool kActivationsAhead = !kTwoRowGroups;  // as in multiply_warp_tile
  ChunkActivations<kTwoRowGroups> activations;
  if constexpr (kActivationsAhead) {
    w.m0 = run.m0(run.first);
    load_activations(w, run.chunk(run.first), lane, activations);
  }
  int stage = 0, piece_first = run.first;
  for (int unit = run.first; unit < run.last; ++unit) {
    const int chunk = run.chunk(unit);
    w.m0 = run.m0(unit);
    if constexpr (!kActivationsAhead) load_activations(w, chunk, lane, activations);
    ptx::wait_async_copies<kA16w4Stages - 2>();
    ChunkWeights current;
#pragma unroll
    for (int t = 0; t < kA16w4TilesPerWarp; ++t) {
      current.weights[t] = ring.weights[stage][t][lane];
      current.scales[t] = ring.scales[stage][t][lane];
    }
    const int ahead = unit + kA16w4Stages - 1;
    const int free_stage = stage == 0 ? kA16w4Stages - 1 : stage - 1;
    if (ahead < run.last) fetch_chunk(w, ahead % run.tile_units, lane, ring, free_stage);
    ptx::commit_async_copies();
    ChunkActivations<kTwoRowGroups> next;
    if constexpr (kActivationsAhead) {
      WarpWork following = w;
      following.m0 = run.m0(unit + 1);
      load_activations(following, run.chunk(unit + 1), lane, next);
    }
    multiply_chunk<kScale>(current, activations, accumulators);
    if constexpr (kActivationsAhead) activations = next;
    stage = stage == kA16w4Stages - 1 ? 0 : stage + 1;
    if (chunk == run.chunks - 1 || unit + 1 == run.last) {
      finish(accumulators, unit / run.chunks, piece_first, unit + 1);
#pragma unroll
      for (int t = 0; t < kA16w4TilesPerWarp; ++t)
#pragma unroll
        for (int e = 0; e < 4; ++e) accumulators[t][e] = 0.0f;
      piece_first = unit + 1;
    }
  }
  ptx::wait_async_copies<0>();
}

// Where a warp tile's product goes: straight to the bf16 output when K is not split, else added into the fp32
// workspace (zero between runs), the last of `splits` CTAs to arrive at the tile writing the bf16 output and
// leaving the workspace and its counter at zero again.
struct WarpOutput {
  uint16_t* c;
  int64_t ldc;
  int m, n;         // rows and columns of this output
  int m0, col0;     // the warp tile's first row and column
  float scale;      // the product's scale (a16w4_layout.hpp): 2^offset times any per-tensor scale
  float* partials;  // [m][ldc] fp32, when splits > 1
  unsigned* arrivals;
  int splits;            // arrivals that complete the tile: K splits, or K chunks for a warp run's pieces
  int arrival_share = 1;  // this warp's arrivals: 1 a split, the chunks it summed for a warp run's piece
};

__device__ __forceinline__ void store_bf16_pair(uint16_t* out, float v0, float v1, bool pair_fits, bool aligned) {
  if (pair_fits && aligned) {
    *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);
  } else {
    out[0] = __bfloat16_as_ushort(__float2bfloat16_rn(v0));
    if (pair_fits) out[1] = __bfloat16_as_ushort(__float2bfloat16_rn(v1));
  }
}

// After the warp's partial sums went into the workspace: whether its CTA is the last of the split to arrive at
// the tile (then every other CTA's sums are visible: they fenced before arriving).
__device__ __forceinline__ bool last_to_arrive(const WarpOutput& o) {
  __threadfence();
  __syncwarp();
  unsigned arrived = 0;
  if (threadIdx.x % 32 == 0) arrived = atomicAdd(o.arrivals, unsigned(o.arrival_share));
  arrived = __shfl_sync(0xFFFFFFFFu, arrived, 0);
  if (arrived != unsigned(o.splits - o.arrival_share)) return false;
  __threadfence();
  return true;
}

// The eight-row product (multiply_chunk's operands traded) element by element: consecutive columns of an output
// row sit in different lanes.
__device__ __forceinline__ void finish_traded_warp_tile(const float (&accumulators)[kA16w4TilesPerWarp][4],
                                                        const WarpOutput& o) {
  static_assert(kA16w4TilesPerWarp % 2 == 0, "the traded operands take the n8 tiles in pairs");
  const int lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
  const auto each_value = [&](auto&& visit) {
#pragma unroll
    for (int p = 0; p < kA16w4TilesPerWarp / 2; ++p)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = o.m0 + 2 * quad + e % 2, col = o.col0 + (2 * p + e / 2) * 8 + group;
        if (row < o.m && col < o.n) visit(accumulators[p][e], int64_t(row) * o.ldc + col);
      }
  };
  const auto store = [&](int64_t at, float value) {
    o.c[at] = __bfloat16_as_ushort(__float2bfloat16_rn(value * o.scale));
  };
  if (o.splits == 1) {
    each_value([&](float value, int64_t at) { store(at, value); });
    return;
  }
  each_value([&](float value, int64_t at) { atomicAdd(o.partials + at, value); });
  if (!last_to_arrive(o)) return;
  each_value([&](float, int64_t at) {
    store(at, __ldcg(o.partials + at));
    __stcg(o.partials + at, 0.0f);
  });
  if (lane == 0) *o.arrivals = 0;
}

template <bool kTwoRowGroups>
__device__ __forceinline__ void finish_warp_tile(const float (&accumulators)[kA16w4TilesPerWarp][4], const WarpOutput& o) {
  if constexpr (!kTwoRowGroups) {
    finish_traded_warp_tile(accumulators, o);
    return;
  }
  const int lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
  const bool aligned = o.ldc % 2 == 0;
  const auto each_pair = [&](auto&& visit) {
#pragma unroll
    for (int t = 0; t < kA16w4TilesPerWarp; ++t)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = o.m0 + group + 8 * half, col = o.col0 + t * 8 + 2 * quad;
        if (row < o.m && col < o.n) visit(t, half, int64_t(row) * o.ldc + col, col + 1 < o.n);
      }
  };
  if (o.splits == 1) {
    each_pair([&](int t, int half, int64_t at, bool pair_fits) {
      store_bf16_pair(o.c + at, accumulators[t][2 * half] * o.scale, accumulators[t][2 * half + 1] * o.scale,
                      pair_fits, aligned);
    });
    return;
  }
  each_pair([&](int t, int half, int64_t at, bool pair_fits) {
    if (pair_fits && aligned) {
      atomicAdd(reinterpret_cast<float2*>(o.partials + at), make_float2(accumulators[t][2 * half], accumulators[t][2 * half + 1]));
    } else {
      atomicAdd(o.partials + at, accumulators[t][2 * half]);
      if (pair_fits) atomicAdd(o.partials + at + 1, accumulators[t][2 * half + 1]);
    }
  });
  if (!last_to_arrive(o)) return;
  each_pair([&](int, int, int64_t at, bool pair_fits) {
    const float v0 = __ldcg(o.partials + at), v1 = pair_fits ? __ldcg(o.partials + at + 1) : 0.0f;
    store_bf16_pair(o.c + at, v0 * o.scale, v1 * o.scale, pair_fits, aligned);
    __stcg(o.partials + at, 0.0f);
    if (pair_fits) __stcg(o.partials + at + 1, 0.0f);
  });
  if (lane == 0) *o.arrivals = 0;
}

// Sums the partial tiles of the kWarpsK warps that share a warp tile (warp index wn + kWarpsN * wk) into those
// of wk = 0, through `parked` ((kWarpsK - 1) * kWarpsN * 16 * 32 floats). Every thread of the CTA calls it.
template <int kWarpsN, int kWarpsK>
__device__ __forceinline__ void sum_along_k(float (&accumulators)[kA16w4TilesPerWarp][4], float* parked) {
  if constexpr (kWarpsK > 1) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, wn = warp % kWarpsN, wk = warp / kWarpsN;
    const auto slot = [&](int k_warp, int value) { return (((k_warp - 1) * kWarpsN + wn) * 16 + value) * 32 + lane; };
    if (wk > 0) {
#pragma unroll
      for (int v = 0; v < 16; ++v) parked[slot(wk, v)] = accumulators[v / 4][v % 4];
    }
    __syncthreads();
    if (wk == 0) {
      for (int k_warp = 1; k_warp < kWarpsK; ++k_warp)
#pragma unroll
        for (int v = 0; v < 16; ++v) accumulators[v / 4][v % 4] += parked[slot(k_warp, v)];
    }
  }
}

// Sums the warp tiles of the CTAs of a thread-block cluster (the K splits of one output tile, the same warp of
// each holding the same warp tile) into rank 0's, through distributed shared memory: every other CTA parks its
// tiles in `parked` (the warp's own shared memory, free by now), rank 0 reads them. Every thread of every CTA of
// the cluster calls it (`holds`: the warp holds a tile); returns whether this CTA holds the sums.
__device__ __forceinline__ bool sum_over_cluster(float (&accumulators)[kA16w4TilesPerWarp][4], float* parked,
                                                 bool holds) {
  static_assert(kA16w4TilesPerWarp * 4 == 16, "a warp tile is 16 values a lane");
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  const int lane = threadIdx.x % 32;
  const unsigned rank = cluster.block_rank();
  if (holds && rank != 0) {
#pragma unroll
    for (int v = 0; v < 16; ++v) parked[v * 32 + lane] = accumulators[v / 4][v % 4];
  }
  cluster.sync();  // the parked tiles are visible to the cluster
  if (holds && rank == 0) {
    for (unsigned other = 1; other < cluster.num_blocks(); ++other) {
      const float* remote = cluster.map_shared_rank(parked, other);
#pragma unroll
      for (int v = 0; v < 16; ++v) accumulators[v / 4][v % 4] += remote[v * 32 + lane];
    }
  }
  cluster.sync();  // no CTA leaves, freeing its shared memory, before rank 0 has read it
  return rank == 0;
}

}  // namespace shapescope::kernels::cuda::a16w4
