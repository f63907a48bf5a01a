// The kernel body shared by fp8_blockscale and fp8_blockscale_bpreshuffle:
// C[M,N] (bf16) = A[M,K] (e4m3, 1x128 scales) x B[N,K]^T (e4m3, 128x128 scales).
//
// Warp-specialized and persistent. The last warpgroup is the producer: one thread
// walks the CTA's work units (an output tile of kRowGroups*64 x kBlockN, or one K
// range of it under split-K) and has the copy engine (TMA) fill a ring of kStages
// shared-memory stages, each a 128-wide K block of A and B plus the A rows' scales
// for it, completing on "full" barriers. The consumer warpgroups form kKGroups groups
// of kRowGroups: group g takes every kKGroups-th stage (more weight bytes in flight
// per SM when M is small), and in it each warpgroup owns 64 rows. A consumer waits for a
// stage and, per 128-column sub-tile, runs four wgmma m64n128k32 into a block
// product and folds it into its fp32 accumulators with scale_a[row] * scale_b
// (DeepGEMM-style promotion: the tensor cores never see a scale); then it releases
// the stage ("empty" barrier). While one warpgroup promotes, another's wgmmas keep
// the tensor cores busy. A 256-column tile reuses one block product for both
// sub-tiles: it moves 48 KB per K block for 8.4 MFLOP where a 128 x 128 tile moves
// 32 KB for 4.2, and an SM's intake of bytes, not its tensor cores, is what bounds
// the large GEMMs.
//
// At decode the 64-row tile's split-K reductions (cluster and last wave) move only the partial
// tiles' rows that hold output, a few of its 64.
//
// Split-K across CTAs: the split_k CTAs of one thread-block cluster take the K
// slices of the same tiles; ranks 1.. leave their fp32 partial tile in their shared
// memory and rank 0 pulls them over the cluster's shared-memory network (no global
// memory, no atomics), paced by two barriers per rank ("partials ready", "partials
// free").
//
// Split-K over the tail (dense GEMMs, unclustered instances of their own,
// LastWaveSplitSchedule: the instances that run without it hold none of its code): after the
// whole waves of tiles, the remaining tiles' K blocks are cut into one run per CTA
// (fp8_tail_runs.hpp), so the last wave fills the SMs. Either aligned ranges (each tile in
// `splits` equal K ranges, consecutive CTAs taking the ranges of one tile, so the tiles sharing
// a column of B read each K block of it at about the same time) or stream-K (equal runs laid
// over the tiles end to end, cut at any K block: the wave fills the SMs at any tile count, but
// the tiles of one B column read it at different times, so B must stay in L2 between them: the
// cost model takes stream-K only where the tail's B columns fit). The run holding a tile's first
// K block finishes it: the others leave their fp32 partial tile in a global slot of their own
// (a run contributes at most once: only its first piece can continue a tile) and count it in;
// it waits for the count, adds the slots in run order (deterministic) and stores. A finisher
// waits only after its own work, a contributor never, and all CTAs are resident at once.

// End of a unit: the K groups sum through shared memory; group 0 stages the bf16
// tile in shared memory and one thread hands it to the copy engine (a bulk tensor
// store), so the next unit's math starts while the tile is written out.
//
// Which tiles exist and where their rows live is the Schedule's (a template parameter;
// every thread holds its own, as it walks its units in increasing order): DenseSchedule
// (here) walks the M x N tiles of one GEMM, LastWaveSplitSchedule (here) the same tiles with
// the last wave split along K, DenseWeightsAheadSchedule (here) the same tiles with each CTA's
// first unit's weights loaded before the previous grid ends (the 64-row decode tile where the
// whole K fits in its ring: at decode the weights stream while the previous GEMM finishes);
// GroupedSchedule
// (fp8_blockscale_grouped_schedule.cuh) walks the tiles of every group of a grouped GEMM
// and writes the rows of a group's last, partial tile itself, so no tile spills into
// the next group. The body is the same for both.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/fp8_blockscale_config.hpp"
#include "kernels/cuda/fp8_tail_runs.hpp"
#include "kernels/cuda/hopper_ptx.cuh"
#include "kernels/cuda/hopper_tma.cuh"

namespace shapescope::kernels::cuda {

struct Fp8BlockscaleParams {
  CUtensorMap a_map;                 // A [rows][k] e4m3 (rows: M in whole boxes, zeros past M), boxes of a_box_rows x 128 bytes
  CUtensorMap b_map;                 // B [n][k] e4m3, boxes of kBlockN x 128 bytes; pre-shuffled: 128 verbatim rows
  CUtensorMap c_map;                 // C [m][n] bf16, boxes of (kRowGroups*64) x 64 columns
  CUtensorMap a_scale_map;           // A scales, M-major [ceil(k/128)][rows], boxes of a_box_rows
  const float* b_scales = nullptr;   // [ceil(n/128)][ceil(k/128)]
  int m = 0, n = 0, k = 0;           // k a multiple of 16, n of 8 (tensor-map row strides)
  int split_k = 1;                   // CTAs of a (split_k, 1, 1) cluster sharing a tile along K
  int kblocks_per_split = 0;
  // Rows of A one copy delivers: the tile's rows, or M rounded up to 8 when M is smaller
  // (decode moves no zero rows; the stale rows past it only feed output rows past M,
  // which are never stored).
  int a_box_rows = 0;
};

// One dense GEMM with split-K over the tail (LastWaveSplitSchedule). Tiles [0, dp_tiles) run
// whole, a whole number of waves; the tiles after them in runs of K blocks, CTA c taking run c.
struct Fp8LastWaveSplitParams {
  Fp8BlockscaleParams gemm;
  int dp_tiles = 0;
  Fp8TailRuns runs;                // run_kblocks 0: no tail runs
  float* tail_partials = nullptr;  // [CTA][one partial tile]: a contributing CTA's sums
  int* tail_arrivals = nullptr;    // [finishing CTA]: contributions counted in (reset to 0 by it)
};

namespace fp8_detail {

constexpr int kSubTileN = 128;  // columns of one wgmma n128, one B scale block
constexpr int kBlockK = 128;    // one scale block, one 128-byte swizzle row
constexpr int kTileBytesPerRow = kBlockK;

// Registers per thread after the producer hands its share to the consumers (setmaxnreg;
// multiples of 8, and the CTA's total must stay within the SM's 64 K).
template <int kConsumers>
struct RegisterSplit;
template <>
struct RegisterSplit<2> {
  static constexpr int producer = 40, consumer = 232;
};
template <>
struct RegisterSplit<3> {
  static constexpr int producer = 32, consumer = 160;
};

// Byte offset of the bf16 pair at (row, col) in a C staging tile: boxes of 64 columns,
// each rows x 128 bytes in the 128-byte swizzle (what the bulk store reads).
template <int kBlockM>
__device__ __forceinline__ uint32_t staged_c_offset(int row, int col) {
  const int half = col / 64, chunk = (col % 64) / 8;
  return uint32_t(half * kBlockM * 128 + row * 128 + ((chunk ^ (row & 7)) << 4) + (col % 8) * 2);
}

// One output tile: where its rows sit in A and C, how many of them hold output, where
// its columns sit in B, and which row of 128x128 weight-scale blocks it starts at.
struct TileCoords {
  int a_row;          // first row of the tile in A and C
  int rows;           // rows of the tile that hold output (<= the tile's rows)
  int b_row;          // first row of the tile in B
  int n_block;        // the tile's column block within N
  int b_scale_row;    // the weight-scale row of column block 0 of the tile's B (a group's first)
  int a_scale_row;    // first row of the tile in A's scales (a TMA box of them starts on 16 bytes)
  // A piece of a run past the whole waves: its K blocks and the tile's index among those
  // tiles (-1: a whole tile, its K blocks split by the cluster rank).
  int kb_begin = 0, kb_count = 0, tail_tile = -1;
};

// A work unit of the persistent grid: an output tile, and the K blocks of it this CTA
// reduces. Clusters walk the tiles; under split-K the CTAs of a cluster take one tile's
// K slices.
struct WorkUnit {
  TileCoords tile;
  int kb_begin, kb_count;
};

__device__ __forceinline__ WorkUnit work_unit(const Fp8BlockscaleParams& p, const TileCoords& tile, int kblocks) {
  WorkUnit w;
  w.tile = tile;
  if (tile.tail_tile >= 0) {
    w.kb_begin = tile.kb_begin;
    w.kb_count = tile.kb_count;
    return w;
  }
  const int split = int(blockIdx.x) % p.split_k;  // the rank in the cluster
  w.kb_begin = split * p.kblocks_per_split;
  w.kb_count = min(p.kblocks_per_split, kblocks - w.kb_begin);
  return w;
}

// The ring stage of the q-th K block a CTA consumes, and the parity of its barrier phase.
template <int kStages>
__device__ __forceinline__ void ring_position(uint32_t q, int& stage, uint32_t& parity) {
  stage = int(q % kStages);
  parity = (q / kStages) & 1;
}

}  // namespace fp8_detail

// The tiles of one GEMM C[M,N] = A[M,K] x B[N,K]^T; rows past M are clipped by the tensor map.
struct DenseSchedule {
  using Params = Fp8BlockscaleParams;
  static constexpr bool kPartialTiles = false;  // every tile stores through the tensor map
  static constexpr bool kWeightsAhead = false;  // no B ahead of the previous grid (DenseWeightsAheadSchedule)
  template <class Instance>
  static constexpr bool uses(const Instance&) {  // every compiled instance
    return true;
  }

  __device__ static const Fp8BlockscaleParams& gemm(const Params& p) { return p; }
  // The tile of `unit`, or false past the last unit.
  template <int kBlockM, int kBlockN>
  __device__ bool next(const Params& p, int unit, fp8_detail::TileCoords& tile) const {
    const int m_blocks = (p.m + kBlockM - 1) / kBlockM;
    if (unit >= m_blocks * ((p.n + kBlockN - 1) / kBlockN)) return false;
    const int m_block = unit % m_blocks;  // consecutive clusters share a column of B
    const int n_block = unit / m_blocks;
    const int m0 = m_block * kBlockM;
    tile = {m0, min(kBlockM, p.m - m0), n_block * kBlockN, n_block, 0, m0};
    return true;
  }
};

// DenseSchedule's tiles with split-K over the tail. CTA c's units: tiles c, c + grid, ...
// below dp_tiles, then the pieces of its run (unit dp_tiles + c + j * grid: piece j).
struct LastWaveSplitSchedule {
  using Params = Fp8LastWaveSplitParams;
  static constexpr bool kPartialTiles = false;
  static constexpr bool kWeightsAhead = false;  // no B ahead of the previous grid (DenseWeightsAheadSchedule)
  static constexpr bool uses(const Fp8Instance& instance) {
    return !instance.cluster_split && fp8_tail_split_compiled(instance.row_groups);
  }

  __device__ static const Fp8BlockscaleParams& gemm(const Params& p) { return p.gemm; }
  template <int kBlockM, int kBlockN>
  __device__ bool next(const Params& p, int unit, fp8_detail::TileCoords& tile) const {
    int index = unit;
    Fp8TailRuns::Piece piece{-1, 0, 0};
    if (p.runs.run_kblocks > 0 && unit >= p.dp_tiles) {
      const int tail_unit = unit - p.dp_tiles;  // past the whole waves: piece j of run c
      if (!p.runs.piece(tail_unit % int(gridDim.x), tail_unit / int(gridDim.x), piece)) return false;
      index = p.dp_tiles + piece.tile;
    }
    if (!DenseSchedule{}.next<kBlockM, kBlockN>(p.gemm, index, tile)) return false;
    tile.kb_begin = piece.kb_begin;
    tile.kb_count = piece.kb_count;
    tile.tail_tile = piece.tile;
    return true;
  }
};
template <class Schedule>
constexpr bool kSplitsLastWave = std::is_same_v<Schedule, LastWaveSplitSchedule>;

// DenseSchedule's tiles with the B tiles of each CTA's first unit loaded before the previous
// grid ends (load_weights_ahead): the 64-row decode tile only, launched where every first unit
// fits in the ring (fp8_weights_ahead_compiled), so the other instances hold none of its code.
struct DenseWeightsAheadSchedule : DenseSchedule {
  static constexpr bool kWeightsAhead = true;
  static constexpr bool uses(const Fp8Instance& instance) {
    return fp8_weights_ahead_compiled(instance.row_groups, instance.cluster_split);
  }
};

// The pre-shuffled B order: [n tile of 128 rows][K block][row][128 bytes in the 128-byte
// swizzle], rows past N zero. A K-block tile is then one contiguous 16 KB run.
__host__ __device__ inline int64_t preshuffled_tile_offset(int64_t n_tile, int64_t kblock, int64_t kblocks) {
  return (n_tile * kblocks + kblock) * fp8_detail::kSubTileN * fp8_detail::kTileBytesPerRow;
}

// The shared-memory layout of one CTA: constants of an instance and the run-time
// addresses (the dynamic part starts on a 1 KB boundary: swizzle atoms are 1 KB).
template <int kRowGroups, int kKGroups, int kBlockN, int kStages>
struct SharedLayout {
  static constexpr int kBlockM = kRowGroups * 64;
  static constexpr int kATileBytes = kBlockM * fp8_detail::kTileBytesPerRow;
  static constexpr int kBTileBytes = kBlockN * fp8_detail::kTileBytesPerRow;
  static constexpr int kStageBytes = kATileBytes + kBTileBytes;
  static constexpr int kStagedCBytes = kBlockM * kBlockN * 2;
  static constexpr int kAccumulators = kBlockN / 2;                 // per thread: 64 x kBlockN f32 over 128 threads
  static constexpr int kPartialFloats = kRowGroups * 128 * kAccumulators;  // one f32 tile, [row group][i][thread]

  uint32_t stages;            // kStages x (A tile, B tile)
  uint32_t a_scales;          // kStages x the A rows' scales of that stage's K block
  uint32_t staged_c;          // the bf16 output tile, 64-column boxes
  uint32_t k_group_partials;  // partial tiles of K groups 1..
  uint32_t cluster_partial;   // this rank's partial tile under split-K
  uint32_t full, empty;       // kStages barriers each, 8 bytes apart
  uint32_t partials_ready;    // rank 0: every other rank's partial tile is in place
  uint32_t partials_free;     // ranks 1..: rank 0 has read this rank's partial tile

  __device__ uint32_t full_barrier(int stage) const { return full + 8 * stage; }
  __device__ uint32_t empty_barrier(int stage) const { return empty + 8 * stage; }
  __device__ uint32_t a_tile(int stage) const { return stages + stage * kStageBytes; }
  __device__ uint32_t b_tile(int stage) const { return a_tile(stage) + kATileBytes; }
  __device__ uint32_t a_scale_slot(int stage) const { return a_scales + stage * kBlockM * 4; }
};

// The copy engine's move of one K block of B (the weights) of unit w into a ring stage's B tile,
// completing on its full barrier: one box, or for pre-shuffled B one per 128-row sub-tile that exists.
template <int kBlockN, bool kPreshuffledB>
__device__ __forceinline__ void load_b_block(const Fp8BlockscaleParams& p, const fp8_detail::WorkUnit& w, int kb,
                                             int kblocks, int sub_tiles, uint32_t b_tile, uint32_t full) {
  using namespace fp8_detail;
  constexpr int kSubTiles = kBlockN / kSubTileN;
  if constexpr (kPreshuffledB) {
    for (int h = 0; h < sub_tiles; ++h)  // a pre-shuffled tile is 128 consecutive 128-byte rows
      tma::load_tile_2d(b_tile + h * kSubTileN * kTileBytesPerRow, &p.b_map, 0,
                        int(preshuffled_tile_offset(w.tile.n_block * kSubTiles + h, kb, kblocks) / kTileBytesPerRow),
                        full);
  } else {
    tma::load_tile_2d(b_tile, &p.b_map, kb * kBlockK, w.tile.b_row, full);
  }
}

// DenseWeightsAheadSchedule's copy thread. Before the previous grid has finished (programmatic
// dependent launch) the weights do not depend on it, so where the CTA's first unit fits in the
// ring all its B tiles go into the fresh stages at once, each full barrier announcing its whole
// stage; after the wait A and its scales follow into the same stages, then the other units as
// produce() loads them. Only where a whole unit fits: on the H100 (2026-11-25) L2 prefetches of
// more of a longer unit made the deep-K decode shapes 11-38% slower (the early copies delay the
// running grid's, whose time is its serial chain, not HBM).
template <int kRowGroups, int kKGroups, int kBlockN, int kStages, bool kPreshuffledB, class Schedule, class Join>
__device__ __forceinline__ void produce_with_weights_ahead(const typename Schedule::Params& params,
                                                           Schedule& schedule,
                                                           const SharedLayout<kRowGroups, kKGroups, kBlockN, kStages>& smem,
                                                           const Join& join_grid_order) {
  using namespace fp8_detail;
  using Layout = SharedLayout<kRowGroups, kKGroups, kBlockN, kStages>;
  const Fp8BlockscaleParams& p = Schedule::gemm(params);
  constexpr int kSubTiles = kBlockN / kSubTileN;
  const int kblocks = (p.k + kBlockK - 1) / kBlockK;
  const int first_unit = int(blockIdx.x) / p.split_k;
  TileCoords tile;
  const bool first = schedule.template next<Layout::kBlockM, kBlockN>(params, first_unit, tile);
  const WorkUnit w = work_unit(p, tile, kblocks);
  const int ahead = first && w.kb_count <= kStages ? w.kb_count : 0;
  const int sub_tiles = min(kSubTiles, (p.n + kSubTileN - 1) / kSubTileN - w.tile.n_block * kSubTiles);
  const uint32_t b_bytes = kPreshuffledB ? sub_tiles * kSubTileN * kBlockK : Layout::kBTileBytes;
  for (int i = 0; i < ahead; ++i) {  // ring position i is stage i in its first phase
    const int kb = w.kb_begin + i;
    const uint32_t full = smem.full_barrier(i);
    tma::arrive_expect_bytes(full, p.a_box_rows * (kTileBytesPerRow + 4) + b_bytes);
    load_b_block<kBlockN, kPreshuffledB>(p, w, kb, kblocks, sub_tiles, smem.b_tile(i), full);
  }
  join_grid_order();
  for (int i = 0; i < ahead; ++i) {
    const int kb = w.kb_begin + i;
    tma::load_tile_2d(smem.a_tile(i), &p.a_map, kb * kBlockK, w.tile.a_row, smem.full_barrier(i));
    tma::load_tile_2d(smem.a_scale_slot(i), &p.a_scale_map, w.tile.a_scale_row, kb, smem.full_barrier(i));
  }
  produce<kRowGroups, kKGroups, kBlockN, kStages, kPreshuffledB>(params, schedule, smem, uint32_t(ahead), ahead > 0);
}

// The copy warp's loop: for every K block of every unit of this CTA, wait until the ring
// stage is free, announce its bytes and start the copies into it; after the first units_ahead
// units, whose copies fill ring positions [0, q_ahead) (produce_with_weights_ahead).
template <int kRowGroups, int kKGroups, int kBlockN, int kStages, bool kPreshuffledB, class Schedule>
__device__ __forceinline__ void produce(const typename Schedule::Params& params, Schedule& schedule,
                                        const SharedLayout<kRowGroups, kKGroups, kBlockN, kStages>& smem,
                                        uint32_t q_ahead = 0, int units_ahead = 0) {
  using namespace fp8_detail;
  using Layout = SharedLayout<kRowGroups, kKGroups, kBlockN, kStages>;
  const Fp8BlockscaleParams& p = Schedule::gemm(params);
  constexpr int kSubTiles = kBlockN / kSubTileN;
  const int kblocks = (p.k + kBlockK - 1) / kBlockK;
  const int sub_tiles_in_n = (p.n + kSubTileN - 1) / kSubTileN;
  uint32_t q = q_ahead;
  TileCoords tile;
  for (int unit = int(blockIdx.x) / p.split_k + units_ahead * (int(gridDim.x) / p.split_k);
       schedule.template next<Layout::kBlockM, kBlockN>(params, unit, tile); unit += int(gridDim.x) / p.split_k) {
    const WorkUnit w = work_unit(p, tile, kblocks);
    const int sub_tiles = min(kSubTiles, sub_tiles_in_n - w.tile.n_block * kSubTiles);  // pre-shuffled: those that exist
    const uint32_t b_bytes = kPreshuffledB ? sub_tiles * kSubTileN * kBlockK : Layout::kBTileBytes;
    for (int i = 0; i < w.kb_count; ++i, ++q) {
      const int kb = w.kb_begin + i;
      int stage;
      uint32_t parity;
      ring_position<kStages>(q, stage, parity);
      tma::wait_barrier(smem.empty_barrier(stage), parity ^ 1);  // a fresh barrier counts as released
      const uint32_t full = smem.full_barrier(stage);
      tma::arrive_expect_bytes(full, p.a_box_rows * (kTileBytesPerRow + 4) + b_bytes);
      tma::load_tile_2d(smem.a_tile(stage), &p.a_map, kb * kBlockK, w.tile.a_row, full);
      tma::load_tile_2d(smem.a_scale_slot(stage), &p.a_scale_map, w.tile.a_scale_row, kb, full);
      load_b_block<kBlockN, kPreshuffledB>(p, w, kb, kblocks, sub_tiles, smem.b_tile(stage), full);
    }
  }
}

// The math warpgroups' loop: block products, promotion, the K groups' and the cluster's
// sums, and the bulk store of each finished tile.
template <int kRowGroups, int kKGroups, int kBlockN, bool kClusterSplit, int kStages, class Schedule>
__device__ __forceinline__ void consume(const typename Schedule::Params& params, Schedule& schedule,
                                        const SharedLayout<kRowGroups, kKGroups, kBlockN, kStages>& smem) {
  using namespace fp8_detail;
  using Layout = SharedLayout<kRowGroups, kKGroups, kBlockN, kStages>;
  const Fp8BlockscaleParams& p = Schedule::gemm(params);
  constexpr int kBlockM = Layout::kBlockM;
  constexpr int kConsumerThreads = kRowGroups * kKGroups * 128;
  constexpr int kEpilogueThreads = kRowGroups * 128;  // K group 0
  constexpr int kSubTiles = kBlockN / kSubTileN;      // wgmma n128 passes per K block, one block product reused
  constexpr int kAccumulators = Layout::kAccumulators;
  constexpr int kProductRegisters = kSubTileN / 2;
  constexpr int kAllConsumersBarrier = 1, kEpilogueBarrier = 2;
  const int kblocks = (p.k + kBlockK - 1) / kBlockK;
  const int sub_tiles_in_n = (p.n + kSubTileN - 1) / kSubTileN;
  const int rank = int(blockIdx.x) % p.split_k;
  const int warpgroup = threadIdx.x / 128;
  const int row_group = warpgroup % kRowGroups, k_group = warpgroup / kRowGroups;
  const int lane = threadIdx.x % 32, thread_in_group = threadIdx.x % 128;
  const int row_in_tile = row_group * 64 + thread_in_group / 32 * 16 + lane / 4;  // accumulator rows: this, +8
  const int partial_index = row_group * 128 * kAccumulators + thread_in_group;    // + i * 128
  auto floats_at = [](uint32_t shared_address) { return static_cast<float*>(__cvta_shared_to_generic(shared_address)); };
  float accumulators[kAccumulators];
  float block_product[kProductRegisters];
  uint32_t q_unit = 0;       // K blocks this CTA consumed before the current unit
  uint32_t unit_parity = 0;  // phase parity of the partials barriers in the current unit
  int unit_kblocks = 0;      // the current unit's K blocks (advances q_unit, also past a `continue`)
  TileCoords tile;
  for (int unit = int(blockIdx.x) / p.split_k; schedule.template next<kBlockM, kBlockN>(params, unit, tile);
       q_unit += unit_kblocks, unit_parity ^= 1, unit += int(gridDim.x) / p.split_k) {
    const WorkUnit w = work_unit(p, tile, kblocks);
    unit_kblocks = w.kb_count;
    const int m0 = w.tile.a_row, n0 = w.tile.n_block * kBlockN;
    // Past N: the last block's (those columns are never stored). Under the last-wave split from
    // the unit's first K block on (its offset need not stay live through the loop).
    const int kb_in_rows = kSplitsLastWave<Schedule> ? w.kb_begin : 0;
    const float* b_scales_rows[kSubTiles];
#pragma unroll
    for (int h = 0; h < kSubTiles; ++h)
      b_scales_rows[h] = p.b_scales +
                         int64_t(w.tile.b_scale_row + min(w.tile.n_block * kSubTiles + h, sub_tiles_in_n - 1)) * kblocks +
                         kb_in_rows;
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) accumulators[i] = 0.0f;

    // K group g takes the K blocks at ring positions q = g (mod kKGroups): with kStages a
    // multiple of kKGroups every stage always serves the same group, so each group sees
    // every phase of its stages' barriers in order (a parity wait cannot tell a phase
    // from the one two ahead).
    for (int i = int((k_group + kKGroups - q_unit % kKGroups) % kKGroups); i < w.kb_count; i += kKGroups) {
      const int kb = w.kb_begin - kb_in_rows + i;  // from where b_scales_rows start
      float scale_b[kSubTiles];  // one per 128 columns and K block, the same for the whole warp
#pragma unroll
      for (int h = 0; h < kSubTiles; ++h) scale_b[h] = __ldg(b_scales_rows[h] + kb);
      int stage;
      uint32_t parity;
      ring_position<kStages>(q_unit + i, stage, parity);
      tma::wait_barrier(smem.full_barrier(stage), parity);
      // The activation scales came with the stage (the copy engine, not a global load per thread).
      const float* const stage_scales = floats_at(smem.a_scale_slot(stage));
      const float scale_a0 = stage_scales[row_in_tile], scale_a1 = stage_scales[row_in_tile + 8];
      const uint32_t a_tile = smem.a_tile(stage) + row_group * 64 * kTileBytesPerRow;
#pragma unroll
      for (int h = 0; h < kSubTiles; ++h) {  // one 64 x 128 block product per sub-tile, promoted right away
        const uint32_t b_sub_tile = smem.b_tile(stage) + h * kSubTileN * kTileBytesPerRow;
        ptx::wgmma_fence();
#pragma unroll
        for (int k_step = 0; k_step < kBlockK / 32; ++k_step) {
          ptx::WgmmaE4m3<kSubTileN>::run(block_product, ptx::swizzled_128b_descriptor(a_tile + k_step * 32),
                                         ptx::swizzled_128b_descriptor(b_sub_tile + k_step * 32), k_step > 0);
        }
        ptx::wgmma_commit();
        ptx::wgmma_wait<0>();
        ptx::fence_accumulators(block_product);
        if (h == kSubTiles - 1 && lane == 0) tma::arrive(smem.empty_barrier(stage));
        const float scale0 = scale_a0 * scale_b[h], scale1 = scale_a1 * scale_b[h];
#pragma unroll
        for (int i = 0; i < kProductRegisters; ++i)
          accumulators[h * kProductRegisters + i] += block_product[i] * ((i & 2) ? scale1 : scale0);
      }
    }

    if constexpr (kKGroups > 1) {  // K groups 1.. hand their sums to group 0
      float* const partials = floats_at(smem.k_group_partials);
      if (k_group > 0) {
        float* const mine = partials + (k_group - 1) * Layout::kPartialFloats + partial_index;
#pragma unroll
        for (int i = 0; i < kAccumulators; ++i) mine[i * 128] = accumulators[i];
      }
      tma::sync_named(kAllConsumersBarrier, kConsumerThreads);
      if (k_group == 0) {
#pragma unroll
        for (int g = 1; g < kKGroups; ++g) {
          const float* other = partials + (g - 1) * Layout::kPartialFloats + partial_index;
#pragma unroll
          for (int i = 0; i < kAccumulators; ++i) accumulators[i] += other[i * 128];
        }
      }
      tma::sync_named(kAllConsumersBarrier, kConsumerThreads);  // the partials may be overwritten again
      if (k_group > 0) continue;
    }

    // A tail tile cut between runs: the run holding its first K block finishes it, the others
    // contribute. Worked out from the unit again, so nothing more stays live through the main loop.
    if constexpr (kSplitsLastWave<Schedule>) {
      Fp8TailRuns::Piece piece{};
      const int tail_unit = unit - params.dp_tiles;
      if (tail_unit >= 0 && params.runs.piece(tail_unit % int(gridDim.x), tail_unit / int(gridDim.x), piece) &&
          params.runs.last_run(piece.tile) > params.runs.first_run(piece.tile)) {
        const int first_run = params.runs.first_run(piece.tile), last_run = params.runs.last_run(piece.tile);
        // The decode tile moves only the rows that hold output (at decode a few of its 64); the
        // taller tiles all of them (their machine code stays as it was).
        const bool top_row = kRowGroups > 1 || row_in_tile < w.tile.rows;
        const bool bottom_row = kRowGroups > 1 || row_in_tile + 8 < w.tile.rows;
        if (piece.kb_begin > 0) {  // a contributor: its sums into its slot, then counted in
          float* const mine = params.tail_partials + int64_t(blockIdx.x) * Layout::kPartialFloats + partial_index;
#pragma unroll
          for (int i = 0; i < kAccumulators; ++i)
            if ((i & 2) ? bottom_row : top_row) __stcg(mine + i * 128, accumulators[i]);
          tma::sync_named(kEpilogueBarrier, kEpilogueThreads);
          if (threadIdx.x == 0) {
            __threadfence();
            atomicAdd(params.tail_arrivals + first_run, 1);
          }
          continue;
        }
        if (threadIdx.x == 0) {  // the finisher: every contribution in, then the count back to 0 for the next launch
          int* const arrivals = params.tail_arrivals + blockIdx.x;
          while (ptx::load_acquire_gpu(arrivals) < last_run - first_run) {
          }
          *arrivals = 0;
        }
        tma::sync_named(kEpilogueBarrier, kEpilogueThreads);
        // Added straight from L2 into the accumulators: a staging array would cost the main loop registers.
        for (int run = first_run + 1; run <= last_run; ++run) {
          const float* const other = params.tail_partials + int64_t(run) * Layout::kPartialFloats + partial_index;
#pragma unroll
          for (int i = 0; i < kAccumulators; ++i)
            if ((i & 2) ? bottom_row : top_row) accumulators[i] += __ldcg(other + i * 128);
        }
      }
    }

    if constexpr (kClusterSplit) {  // ranks 1.. hand their partial tiles to rank 0
      if (rank > 0) {
        if (threadIdx.x == 0) tma::wait_barrier_from_cluster(smem.partials_free, unit_parity ^ 1);
        tma::sync_named(kEpilogueBarrier, kEpilogueThreads);  // rank 0 is done with the previous partial
        float* const mine = floats_at(smem.cluster_partial) + partial_index;
#pragma unroll
        for (int i = 0; i < kAccumulators; ++i) mine[i * 128] = accumulators[i];
        tma::sync_named(kEpilogueBarrier, kEpilogueThreads);
        if (threadIdx.x == 0) {
          tma::fence_cluster();
          tma::arrive_in_cluster(tma::map_to_rank(smem.partials_ready, 0));
        }
        continue;
      }
      tma::wait_barrier_from_cluster(smem.partials_ready, unit_parity);
      // The decode tile pulls only the rows that hold output (at decode a few of its 64).
      const bool top_row = kRowGroups > 1 || row_in_tile < w.tile.rows;
      const bool bottom_row = kRowGroups > 1 || row_in_tile + 8 < w.tile.rows;
      for (int r = 1; r < p.split_k; ++r) {
        const uint32_t remote = tma::map_to_rank(smem.cluster_partial + partial_index * 4, r);
        float pulled[kAccumulators];  // every load in flight before the first add
#pragma unroll
        for (int i = 0; i < kAccumulators; ++i)
          pulled[i] = ((i & 2) ? bottom_row : top_row) ? tma::load_from_cluster(remote + i * 128 * 4) : 0.0f;
#pragma unroll
        for (int i = 0; i < kAccumulators; ++i) accumulators[i] += pulled[i];
      }
      tma::sync_named(kEpilogueBarrier, kEpilogueThreads);
      if (threadIdx.x < p.split_k - 1) {  // one thread per other rank: its partial may be overwritten
        tma::fence_cluster();
        tma::arrive_in_cluster(tma::map_to_rank(smem.partials_free, threadIdx.x + 1));
      }
    }

    // Stage the bf16 tile (once the previous unit's store has read it) and store it in bulk.
    // Accumulator i sits at row row_in_tile (+8 when i & 2), column 8 * (i / 4) + 2 * (lane % 4) + (i & 1).
    const int col_base = 2 * (lane % 4);
    if (threadIdx.x == 0) tma::wait_stores_read();
    tma::sync_named(kEpilogueBarrier, kEpilogueThreads);
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const int col = col_base + 8 * j;
      const __nv_bfloat162 top = __floats2bfloat162_rn(accumulators[4 * j], accumulators[4 * j + 1]);
      const __nv_bfloat162 bottom = __floats2bfloat162_rn(accumulators[4 * j + 2], accumulators[4 * j + 3]);
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(smem.staged_c + staged_c_offset<kBlockM>(row_in_tile, col)),
                   "r"(*reinterpret_cast<const uint32_t*>(&top))
                   : "memory");
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(smem.staged_c + staged_c_offset<kBlockM>(row_in_tile + 8, col)),
                   "r"(*reinterpret_cast<const uint32_t*>(&bottom))
                   : "memory");
    }
    ptx::fence_generic_to_async_proxy();
    tma::sync_named(kEpilogueBarrier, kEpilogueThreads);
    bool stored_row_by_row = false;
    if constexpr (Schedule::kPartialTiles) {  // a tile short of rows: the schedule writes exactly its rows
      if (w.tile.rows < kBlockM) {
        Schedule::template store_rows<kBlockM, kBlockN>(params, smem.staged_c, w.tile, n0, int(threadIdx.x),
                                                        kEpilogueThreads);
        stored_row_by_row = true;
      }
    }
    if (!stored_row_by_row && threadIdx.x == 0) {  // 64-column boxes; rows past M and columns past N are not written
#pragma unroll
      for (int box = 0; box < kBlockN / 64; ++box)
        if (n0 + box * 64 < p.n) tma::store_tile_2d(&p.c_map, n0 + box * 64, m0, smem.staged_c + box * kBlockM * 128);
      tma::commit_stores();
    }
  }
  if (threadIdx.x == 0) tma::wait_stores();  // shared memory must outlive the last store's reads
}

template <int kRowGroups, int kKGroups, int kBlockN, bool kClusterSplit, int kStages, bool kPreshuffledB,
          class Schedule = DenseSchedule>
__global__ void __launch_bounds__((kRowGroups * kKGroups + 1) * 128, 1)
    fp8_blockscale_kernel(const __grid_constant__ typename Schedule::Params params) {
  using Layout = SharedLayout<kRowGroups, kKGroups, kBlockN, kStages>;
  constexpr int kConsumers = kRowGroups * kKGroups;
  static_assert(kStages % kKGroups == 0, "each ring stage must always serve the same K group");
  static_assert(!(kPreshuffledB && Schedule::kPartialTiles), "pre-shuffled B holds one GEMM's weights");
  static_assert(!kSplitsLastWave<Schedule> || (!kClusterSplit && fp8_tail_split_compiled(kRowGroups)),
                "the last-wave split runs on unclustered instances with registers to spare");
  const Fp8BlockscaleParams& p = Schedule::gemm(params);

  extern __shared__ uint8_t shared_raw[];
  __shared__ alignas(8) uint64_t barriers[2 * kStages + 2];
  Schedule schedule;  // this thread's walk over its units
  Layout smem;
  smem.stages = (ptx::shared_address(shared_raw) + 1023u) & ~1023u;
  smem.staged_c = smem.stages + kStages * Layout::kStageBytes;
  smem.k_group_partials = smem.staged_c + Layout::kStagedCBytes;
  smem.cluster_partial = smem.k_group_partials + (kKGroups - 1) * Layout::kPartialFloats * 4;
  smem.a_scales = smem.cluster_partial + (kClusterSplit ? Layout::kPartialFloats * 4 : 0);
  smem.full = ptx::shared_address(&barriers[0]);
  smem.empty = ptx::shared_address(&barriers[kStages]);
  smem.partials_ready = ptx::shared_address(&barriers[2 * kStages]);
  smem.partials_free = ptx::shared_address(&barriers[2 * kStages + 1]);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      tma::init_barrier(smem.full_barrier(s), 1);  // the producer's arrival carries the byte count
      tma::init_barrier(smem.empty_barrier(s), kRowGroups * 4);  // lane 0 of every warp of the consuming K group
    }
    tma::init_barrier(smem.partials_ready, kClusterSplit ? p.split_k - 1 : 1);
    tma::init_barrier(smem.partials_free, 1);
    tma::fence_barrier_init();
  }
  if constexpr (kClusterSplit) {  // every CTA's barriers exist before any remote arrival
    tma::sync_cluster();
  } else {
    __syncthreads();
  }

  // Under programmatic dependent launch the previous grid may still run until here: the
  // prologue above touches no global memory; every thread waits for that grid before its
  // first global access, then lets the next grid's CTAs start on the SMs ours free.
  const auto join_grid_order = [] {
    ptx::wait_for_previous_grid();
    ptx::allow_dependent_launch();
  };
  const bool copy_thread = threadIdx.x == kConsumers * 128;
  if (threadIdx.x / 128 == kConsumers) {  // the copy warpgroup: one thread issues, the others idle
    if constexpr (kConsumers > 1) tma::release_registers<fp8_detail::RegisterSplit<kConsumers>::producer>();
    if (copy_thread) {  // kernel parameters, not global memory: no need to wait
      tma::prefetch_tensor_map(&p.a_map);
      tma::prefetch_tensor_map(&p.a_scale_map);
      tma::prefetch_tensor_map(&p.b_map);
    }
    if constexpr (Schedule::kWeightsAhead) {
      if (copy_thread) {
        produce_with_weights_ahead<kRowGroups, kKGroups, kBlockN, kStages, kPreshuffledB>(params, schedule, smem,
                                                                                          join_grid_order);
      } else {
        join_grid_order();
      }
    } else {
      join_grid_order();  // before the schedule's first read of the rows per group, too
      if (copy_thread) produce<kRowGroups, kKGroups, kBlockN, kStages, kPreshuffledB>(params, schedule, smem);
    }
  } else {
    if constexpr (kConsumers > 1) tma::claim_registers<fp8_detail::RegisterSplit<kConsumers>::consumer>();
    join_grid_order();
    consume<kRowGroups, kKGroups, kBlockN, kClusterSplit, kStages>(params, schedule, smem);
  }
  // A CTA's shared memory and barriers must outlive the other CTAs' accesses to them.
  if constexpr (kClusterSplit) tma::sync_cluster();
}

}  // namespace shapescope::kernels::cuda
