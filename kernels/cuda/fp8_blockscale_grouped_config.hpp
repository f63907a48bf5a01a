// The heuristic of fp8_blockscale_grouped: the dense kernel's candidates (its compiled
// instances, each with every split it runs) priced by the same grid cost model over the
// grouped GEMM's own work: the tiles of every group (never a tile of padding), the stage
// rows the largest group needs, and the bytes of every expert with rows. Host-only, so the
// CPU tests check it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/cuda/fp8_blockscale_config.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/host_device.hpp"

namespace shapescope::kernels::cuda {

// Rows of A one copy delivers for a layout: the largest group a tile can hold (masked: the
// slot, whatever the valid counts a graph replays with), rounded up to 8, at most the tile.
inline int64_t grouped_a_box_rows(const GroupedShape& shape, int block_m) {
  const int64_t largest = shape.layout == GroupLayout::masked ? shape.max_m : shape.max_rows();
  return std::min<int64_t>(block_m, std::max<int64_t>((largest + 7) / 8 * 8, 8));
}

inline int64_t grouped_tiles(const GroupedShape& shape, int block_m, int block_n) {
  int64_t m_tiles = 0;
  for (const int64_t rows : shape.rows) m_tiles += (rows + block_m - 1) / block_m;
  return m_tiles * ((shape.n + block_n - 1) / block_n);
}

inline GridCostModel::Work grouped_work(const GroupedShape& shape, const Fp8BlockscaleConfig& config) {
  GridCostModel::Work work;
  const int64_t n_blocks = (shape.n + config.block_n - 1) / config.block_n;
  const double rows = double(shape.useful_rows()), n = double(shape.n), k = double(shape.k);
  work.kblocks = (shape.k + kFp8BlockK - 1) / kFp8BlockK;
  work.tiles = grouped_tiles(shape, config.block_m(), config.block_n);
  work.a_rows = double(grouped_a_box_rows(shape, config.block_m()));
  work.a_bytes = rows * k;
  work.a_and_c_bytes = work.a_bytes + 2.0 * rows * n;
  work.b_column_bytes = double(config.block_n) * k;
  // Every active expert's weights; a B tile column serves that expert's row tiles only.
  work.b_bytes = double(shape.active_groups() * n_blocks) * work.b_column_bytes;
  work.tiles_per_b_column =
      std::max(1.0, double(work.tiles) / double(std::max<int64_t>(shape.active_groups() * n_blocks, 1)));
  return work;
}

// The order of one group's tiles: bands of `band_m_tiles` m-tiles, each band's tiles m-tile
// fastest (consecutive units share a column of B), band after band. One band when the
// group's m-tiles fit in one: m-tile fastest over the whole group.
struct GroupTile {
  int m_block, n_block;
};

SHAPESCOPE_HD GroupTile grouped_tile_of(int local_unit, int m_tiles, int n_tiles, int band_m_tiles) {
  const int band = local_unit / (band_m_tiles * n_tiles), band_first = band * band_m_tiles;
  const int band_rows = band_first + band_m_tiles <= m_tiles ? band_m_tiles : m_tiles - band_first;
  const int in_band = local_unit - band * band_m_tiles * n_tiles;
  return {band_first + in_band % band_rows, in_band / band_rows};
}

// M-tiles per band. Where the largest group's A outgrows half the L2 (the cost model's limit
// for A staying in L2 while the B columns pass), walking all its m-tiles per column of B
// would stream that A from memory again for every wave: bands of about one wave (the grid's
// concurrent units over the n-tiles) keep a wave's reads to a band of A plus the group's B.
// Otherwise one band covers every group (A stays in L2 in either order; measured on the H100,
// 2026-11-25: 4 x 8192 rows N=4096 K=7168 +4% with bands, no gain where A fits).
inline int grouped_band_m_tiles(const GroupedShape& shape, const Fp8BlockscaleConfig& config,
                                const Fp8DeviceSpec& spec) {
  const int64_t largest = shape.layout == GroupLayout::masked ? shape.max_m : shape.max_rows();
  const int64_t largest_m_tiles = std::max<int64_t>(1, (largest + config.block_m() - 1) / config.block_m());
  if (2 * largest * shape.k <= spec.l2_bytes) return int(std::min<int64_t>(largest_m_tiles, INT32_MAX));
  const int64_t n_tiles = (shape.n + config.block_n - 1) / config.block_n;
  return int(std::max<int64_t>(1, int64_t(config.ctas / config.split_k) / std::max<int64_t>(n_tiles, 1)));
}

// The instances grouped GEMMs run: all but the 192-row tile, which spills registers under the
// grouped schedule (ptxas: 56 bytes; the dense one spills none).
constexpr bool fp8_grouped_instance(const Fp8Instance& instance) { return instance.row_groups < 3; }

// A TMA box of A's f32 scales must start on 16 bytes (an illegal instruction on the H100
// otherwise), so a group's scales start on a multiple of this many rows whatever row its
// activations start on.
constexpr int64_t kGroupedScaleRowAlignment = 4;

// Where A's scales sit (M-major, one column per K block): the problem's layout with every
// group's first row rounded up to kGroupedScaleRowAlignment (contiguous: align raised to
// its least common multiple with it; masked: the slot rounded up to it). A and C stay in
// the problem's layout; only this small tensor carries the padding (as an engine's scale
// transpose writes it), and the layouts that already align cost nothing.
inline GroupedShape grouped_scale_layout(const GroupedShape& shape) {
  constexpr int64_t step = kGroupedScaleRowAlignment;
  GroupedShape scales = shape;
  if (shape.layout == GroupLayout::masked) {
    scales.max_m = (shape.max_m + step - 1) / step * step;
  } else {
    scales.align = std::lcm(shape.align, step);
  }
  return scales;
}

inline Fp8BlockscaleConfig choose_fp8_grouped_config(const GroupedShape& shape, const Fp8DeviceSpec& spec) {
  const int64_t kblocks = (shape.k + kFp8BlockK - 1) / kFp8BlockK;
  const GridCostModel model;
  std::vector<Fp8CostedConfig> costed;
  for (const Fp8Instance& instance : kFp8Instances) {
    if (!fp8_grouped_instance(instance) || !(shape.max_rows() > kFp8SmallMLimit || instance.row_groups == 1)) continue;
    const Fp8BlockscaleConfig tile{instance.row_groups, instance.k_groups, instance.block_n};
    const GridCostModel::Work work = grouped_work(shape, tile);
    const int64_t first_split = instance.cluster_split ? 2 : 1;
    const int64_t last_split = instance.cluster_split ? std::min<int64_t>(kblocks, kFp8MaxSplit) : 1;
    for (int64_t split = first_split; split <= last_split; ++split) {
      const Fp8BlockscaleConfig candidate = with_split_over(tile, kblocks, std::max<int64_t>(work.tiles, 1), split, spec);
      if (candidate.split_k != split) continue;  // each split once
      if (candidate.ctas < 1 || !fp8_fits_device(candidate, spec)) continue;
      costed.push_back({candidate, model.microseconds(work, candidate, candidate.split_k, spec)});
    }
  }
  if (costed.empty())
    throw UserError("fp8_blockscale_grouped: no compiled instance fits " + spec.name + " (" +
                    std::to_string(spec.shared_bytes_per_block_optin) + " bytes of shared memory per block); "
                    "pick another kernel");
  return cheapest_fp8_config(costed).config;
}

}  // namespace shapescope::kernels::cuda
