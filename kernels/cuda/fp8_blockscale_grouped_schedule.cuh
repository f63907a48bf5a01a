// The grouped schedule of fp8_blockscale_kernel (fp8_blockscale_kernel.cuh): the work
// units of every group of a grouped GEMM, without a single tile of padding.
//
// Units are numbered group by group: group g owns ceil(rows_g / tile rows) x n-tiles of
// them (none when it has no rows), in bands of m-tiles of about one wave, m-tiles fastest
// within a band so consecutive units share a column of B (grouped_tile_of). The rows per group live on the device (masked: the valid counts a CUDA graph
// replays with). Every thread walks its own units in increasing order, so it keeps a
// cursor: the group it is in, that group's first unit and its first layout row
// (contiguous: the rows before it, each group rounded up to `align`; masked:
// g x slot_rows) and first row of A's scales (the same with scale_align and
// scale_slot_rows: grouped_scale_layout), and moves the cursor forward one group at a
// time, reading each group's rows once (a cached load). No table, so the ring keeps the dense kernel's
// stages. A group's last tile may hold fewer rows than the tile; the epilogue threads
// write its rows themselves (16-byte stores from the staged tile), so nothing lands in
// the next group's rows or past a masked slot. Whole tiles leave through the bulk store.
#pragma once

#include <cstdint>

#include "kernels/cuda/fp8_blockscale_grouped_config.hpp"
#include "kernels/cuda/fp8_blockscale_kernel.cuh"

namespace shapescope::kernels::cuda {

struct Fp8GroupedParams {
  Fp8BlockscaleParams gemm;         // n, k, the tensor maps (A and C over the layout's rows, B over groups x n
                                    // rows), b_scales [groups][ceil(n/128)][ceil(k/128)]; gemm.m is unused
  const int* group_rows = nullptr;  // [groups]: rows per group, on the device
  uint16_t* c = nullptr;            // C [layout rows][n] bf16, for the row-by-row stores
  int groups = 0;
  int align = 1;                    // contiguous: each group's first row is a multiple of this
  int slot_rows = 0;                // masked: rows per group slot; 0: contiguous
  int scale_align = 4;              // the same two for A's scales (grouped_scale_layout)
  int scale_slot_rows = 0;
  int band_m_tiles = 1;             // m-tiles per band of a group's tiles (grouped_band_m_tiles)
};

class GroupedSchedule {
 public:
  using Params = Fp8GroupedParams;
  static constexpr bool kPartialTiles = true;
  static constexpr bool kWeightsAhead = false;  // its rows per group are read from global memory
  static constexpr bool uses(const Fp8Instance& instance) { return fp8_grouped_instance(instance); }

  __device__ static const Fp8BlockscaleParams& gemm(const Params& p) { return p.gemm; }

  // The tile of `unit` (never below the previous one asked for), or false past the last unit.
  template <int kBlockM, int kBlockN>
  __device__ bool next(const Params& p, int unit, fp8_detail::TileCoords& tile) {
    const int n_tiles = (p.gemm.n + kBlockN - 1) / kBlockN;
    if (group_ < 0) enter_group(p, 0);
    while (group_ < p.groups && unit >= group_unit_ + (group_rows_ + kBlockM - 1) / kBlockM * n_tiles) {
      group_unit_ += (group_rows_ + kBlockM - 1) / kBlockM * n_tiles;
      group_row_ += p.slot_rows > 0 ? p.slot_rows : (group_rows_ + p.align - 1) / p.align * p.align;
      group_scale_row_ += p.slot_rows > 0 ? p.scale_slot_rows
                                          : (group_rows_ + p.scale_align - 1) / p.scale_align * p.scale_align;
      enter_group(p, group_ + 1);
    }
    if (group_ >= p.groups) return false;
    const int m_tiles = (group_rows_ + kBlockM - 1) / kBlockM;
    const GroupTile at = grouped_tile_of(unit - group_unit_, m_tiles, n_tiles, p.band_m_tiles);
    const int m_block = at.m_block, n_block = at.n_block;
    const int scale_blocks_in_n = (p.gemm.n + fp8_detail::kSubTileN - 1) / fp8_detail::kSubTileN;
    tile = {group_row_ + m_block * kBlockM, min(kBlockM, group_rows_ - m_block * kBlockM),
            group_ * p.gemm.n + n_block * kBlockN, n_block, group_ * scale_blocks_in_n,
            group_scale_row_ + m_block * kBlockM};
    return true;
  }

  // The tile's rows (fewer than the tile) from the staged bf16 tile to C, 16 bytes per store.
  template <int kBlockM, int kBlockN>
  __device__ static void store_rows(const Params& p, uint32_t staged_c, const fp8_detail::TileCoords& tile, int n0,
                                    int thread, int threads) {
    constexpr int kChunksPerRow = kBlockN / 8;
    for (int i = thread; i < tile.rows * kChunksPerRow; i += threads) {
      const int row = i / kChunksPerRow, col = (i % kChunksPerRow) * 8;
      if (n0 + col >= p.gemm.n) continue;  // n % 8 == 0: a chunk is wholly inside N or wholly past it
      uint32_t x, y, z, w;
      asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
                   : "r"(staged_c + fp8_detail::staged_c_offset<kBlockM>(row, col)));
      *reinterpret_cast<uint4*>(p.c + int64_t(tile.a_row + row) * p.gemm.n + n0 + col) = make_uint4(x, y, z, w);
    }
  }

 private:
  __device__ void enter_group(const Params& p, int group) {
    group_ = group;
    group_rows_ = group < p.groups ? __ldg(p.group_rows + group) : 0;
  }

  // The cursor: its group (-1 before the first unit), that group's rows, first unit, first layout row and
  // first row of A's scales.
  int group_ = -1, group_rows_ = 0, group_unit_ = 0, group_row_ = 0, group_scale_row_ = 0;
};

}  // namespace shapescope::kernels::cuda
