// The heuristic of fp8_blockscale_grouped (host-only): tiles per expert, never a tile of
// padding; a configuration an instance exists for.
#include "kernels/cuda/fp8_blockscale_grouped_config.hpp"

#include <gtest/gtest.h>

#include <string>
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
