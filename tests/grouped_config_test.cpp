// The heuristic of fp8_blockscale_grouped (host-only): tiles per expert, never a tile of
// padding; a configuration an instance exists for.
#include "kernels/cuda/fp8_blockscale_grouped_config.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace shapescope::kernels::cuda {
namespace {

GroupedShape shape_of(std::vector<int64_t> rows, int64_t n, int64_t k, GroupLayout layout, int64_t align_or_max_m) {
  GroupedShape shape;
  shape.n = n;
  shape.k = k;
  shape.rows = std::move(rows);
  shape.layout = layout;
  if (layout == GroupLayout::contiguous) {
    shape.align = align_or_max_m;
  } else {
    shape.max_m = align_or_max_m;
  }
  return shape;
}

TEST(Fp8GroupedConfig, TilesArePerExpertWhateverThePadding) {
  const std::vector<int64_t> rows = {0, 1, 64, 65, 128, 0, 300};
  const int64_t m_tiles_of_128 = 0 + 1 + 1 + 1 + 1 + 0 + 3;
  for (const int64_t align : {1, 64, 128}) {
    const GroupedShape shape = shape_of(rows, 4096, 7168, GroupLayout::contiguous, align);
    EXPECT_EQ(grouped_tiles(shape, 128, 128), m_tiles_of_128 * 32) << align;
    EXPECT_EQ(grouped_tiles(shape, 64, 256), (0 + 1 + 1 + 2 + 2 + 0 + 5) * 16) << align;
  }
  // Masked slots of 384 rows: still only the tiles with rows.
  EXPECT_EQ(grouped_tiles(shape_of(rows, 4096, 7168, GroupLayout::masked, 384), 128, 128), m_tiles_of_128 * 32);
}

TEST(Fp8GroupedConfig, StageRowsFollowTheLargestGroupOrTheSlot) {
  EXPECT_EQ(grouped_a_box_rows(shape_of({1, 3, 0}, 4096, 7168, GroupLayout::contiguous, 128), 64), 8);
  EXPECT_EQ(grouped_a_box_rows(shape_of({1, 30, 0}, 4096, 7168, GroupLayout::contiguous, 1), 128), 32);
  EXPECT_EQ(grouped_a_box_rows(shape_of({1, 300, 0}, 4096, 7168, GroupLayout::contiguous, 1), 128), 128);
  // Masked: the valid counts may change under a CUDA graph, so the slot decides.
  EXPECT_EQ(grouped_a_box_rows(shape_of({1, 3, 0}, 4096, 7168, GroupLayout::masked, 48), 64), 48);
}

TEST(Fp8GroupedConfig, ScalesOfEveryGroupStartOnFourRows) {
  // Contiguous at align 1: groups start on rows 0, 1, 1, 4, 9; their scales on 0, 4, 4, 8, 16.
  const GroupedShape any_row = shape_of({1, 0, 3, 5, 2}, 4096, 7168, GroupLayout::contiguous, 1);
  const GroupedShape scales = grouped_scale_layout(any_row);
  const std::vector<int64_t> first_rows = {0, 4, 4, 8, 16};
  for (int64_t g = 0; g < any_row.groups(); ++g) {
    EXPECT_EQ(scales.first_row(g), first_rows[std::size_t(g)]) << g;
    EXPECT_EQ(scales.first_row(g) % kGroupedScaleRowAlignment, 0) << g;
  }
  EXPECT_EQ(any_row.layout_rows(), 11);
  EXPECT_EQ(scales.layout_rows(), 20);  // 9 rows of scale padding, none in A or C
  // Align 3: a group's scales start on a multiple of 12, so they also start where its rows' multiple of 3 is.
  const GroupedShape by_three = grouped_scale_layout(shape_of({1, 13, 2}, 4096, 7168, GroupLayout::contiguous, 3));
  EXPECT_EQ(by_three.first_row(1), 12);
  EXPECT_EQ(by_three.first_row(2), 36);
  // Layouts that already start groups on 4 rows are unchanged.
  for (const int64_t align : {4, 64, 128}) {
    const GroupedShape aligned = shape_of({1, 0, 3, 5, 200}, 4096, 7168, GroupLayout::contiguous, align);
    EXPECT_EQ(grouped_scale_layout(aligned).layout_rows(), aligned.layout_rows()) << align;
  }
  // Masked: the slot rounded up to 4.
  EXPECT_EQ(grouped_scale_layout(shape_of({1, 3, 0}, 4096, 7168, GroupLayout::masked, 7)).max_m, 8);
  EXPECT_EQ(grouped_scale_layout(shape_of({1, 3, 0}, 4096, 7168, GroupLayout::masked, 64)).max_m, 64);
}

TEST(Fp8GroupedConfig, BandsVisitEveryTileOfAGroupOnce) {
  for (const auto& [m_tiles, n_tiles, band] : {std::tuple{64, 16, 8}, std::tuple{13, 5, 4}, std::tuple{3, 7, 1},
                                               std::tuple{2, 16, 8}, std::tuple{1, 28, 4}}) {
    SCOPED_TRACE(std::to_string(m_tiles) + " x " + std::to_string(n_tiles) + " band " + std::to_string(band));
    std::vector<int> seen(std::size_t(m_tiles * n_tiles), 0);
    for (int unit = 0; unit < m_tiles * n_tiles; ++unit) {
      const GroupTile tile = grouped_tile_of(unit, m_tiles, n_tiles, band);
      ASSERT_GE(tile.m_block, 0);
      ASSERT_LT(tile.m_block, m_tiles);
      ASSERT_GE(tile.n_block, 0);
      ASSERT_LT(tile.n_block, n_tiles);
      ++seen[std::size_t(tile.n_block * m_tiles + tile.m_block)];
      if (band >= m_tiles) {  // one band: m-tile fastest over the whole group
        EXPECT_EQ(tile.m_block, unit % m_tiles);
        EXPECT_EQ(tile.n_block, unit / m_tiles);
      }
    }
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), m_tiles * n_tiles);
  }
  // 64 m-tiles x 16 n-tiles in bands of 8: units 0..7 walk m-tiles 0..7 of column 0, unit 128 starts band 2.
  EXPECT_EQ(grouped_tile_of(9, 64, 16, 8).m_block, 1);
  EXPECT_EQ(grouped_tile_of(9, 64, 16, 8).n_block, 1);
  EXPECT_EQ(grouped_tile_of(128, 64, 16, 8).m_block, 8);
  EXPECT_EQ(grouped_tile_of(128, 64, 16, 8).n_block, 0);
}

TEST(Fp8GroupedConfig, BandsOfAboutOneWaveWhereAGroupsAOutgrowsHalfTheL2) {
  const Fp8DeviceSpec spec = fp8_reference_spec();  // 50 MB of L2
  Fp8BlockscaleConfig config{2, 1, 256};
  config.ctas = 132;
  // 8192 rows x K 7168 = 56 MiB of A per group: bands of a wave over 16 n-tiles.
  const GroupedShape tall = shape_of({8192, 8192}, 4096, 7168, GroupLayout::contiguous, 128);
  EXPECT_EQ(grouped_band_m_tiles(tall, config, spec), 132 / 16);
  config.split_k = 2;
  EXPECT_EQ(grouped_band_m_tiles(tall, config, spec), 66 / 16);
  const GroupedShape wide = shape_of({8192}, 65536, 7168, GroupLayout::contiguous, 128);
  EXPECT_EQ(grouped_band_m_tiles(wide, config, spec), 1);
  // 4096 rows x K 2048 = 8 MiB: A stays in L2, one band covers the largest group (32 m-tiles).
  config.split_k = 1;
  const GroupedShape fits = shape_of({4096, 100, 0}, 7168, 2048, GroupLayout::contiguous, 128);
  EXPECT_EQ(grouped_band_m_tiles(fits, config, spec), 32);
  // Masked: the slot decides, as for any counts a graph replays with.
  EXPECT_EQ(grouped_band_m_tiles(shape_of({1, 2}, 4096, 7168, GroupLayout::masked, 8192), config, spec), 132 / 16);
}

TEST(Fp8GroupedConfig, PicksACompiledConfiguration) {
  const std::vector<GroupedShape> shapes = {
      shape_of({1, 0, 2, 0, 1, 1, 0, 3}, 4096, 7168, GroupLayout::contiguous, 128),        // decode
      shape_of(std::vector<int64_t>(32, 512), 4096, 7168, GroupLayout::contiguous, 128),  // prefill
      shape_of({80, 176, 128, 72, 64, 248, 96, 160}, 7168, 2048, GroupLayout::contiguous, 1),
      shape_of({1}, 7168, 2048, GroupLayout::masked, 64)};                                // one token
  for (const GroupedShape& shape : shapes) {
    SCOPED_TRACE(shape.layout_text() + " rows " + std::to_string(shape.useful_rows()));
    const Fp8BlockscaleConfig config = choose_fp8_grouped_config(shape, fp8_reference_spec());
    ASSERT_TRUE(fp8_config_compiled(config)) << describe(config);
    EXPECT_TRUE(fp8_grouped_instance(kFp8Instances[std::size_t(fp8_instance_index(config))])) << describe(config);
    EXPECT_GE(config.ctas, config.split_k);
    EXPECT_EQ(config.ctas % config.split_k, 0);  // whole clusters
  }
  // Decode rows (at most 3 per expert) take the 64-row streaming tile.
  EXPECT_EQ(choose_fp8_grouped_config(shapes[0], fp8_reference_spec()).block_m(), 64);
}

// One expert is one dense GEMM: the same tiles, stage rows and bytes, so the same choice
// wherever the dense kernel picks an instance the grouped schedule runs.
TEST(Fp8GroupedConfig, OneExpertChoosesLikeTheDenseKernel) {
  int compared = 0;
  for (const int64_t rows : {1, 5, 100, 700, 4096}) {
    for (const auto& [n, k] : {std::pair<int64_t, int64_t>{7168, 2048}, {4096, 7168}, {512, 7168}}) {
      SCOPED_TRACE("M=" + std::to_string(rows) + " N=" + std::to_string(n) + " K=" + std::to_string(k));
      const Fp8BlockscaleConfig grouped =
          choose_fp8_grouped_config(shape_of({rows}, n, k, GroupLayout::contiguous, 1), fp8_reference_spec());
      const Fp8BlockscaleConfig dense = choose_fp8_blockscale_config(GemmShape{rows, n, k, 1}, fp8_reference_spec());
      if (!fp8_grouped_instance(kFp8Instances[std::size_t(fp8_instance_index(dense))])) {
        EXPECT_NE(grouped.block_m(), dense.block_m());
        continue;
      }
      if (dense.tail_split()) continue;  // the split of the last wave is the dense schedule's alone
      ++compared;
      EXPECT_EQ(grouped.block_m(), dense.block_m());
      EXPECT_EQ(grouped.block_n, dense.block_n);
      EXPECT_EQ(grouped.split_k, dense.split_k);
      EXPECT_EQ(grouped.ctas, dense.ctas);
    }
  }
  EXPECT_GE(compared, 10);
}

}  // namespace
}  // namespace shapescope::kernels::cuda
