// The tiled W4A16 kernels (a16w4_tiled, a16w4_tiled_grouped) against the float64 reference in every FP4 layout
// they take (MXFP4, NVFP4, e2m1_e8m0_16): Llama-3.3-70B weight shapes, K with a partial last step and partial
// scale blocks, K off the 8-element activation rows, N off the 128-column tiles, M off the 32-, 64- and 128-token
// tiles from 1 up, every token tile and split and unsplit K; split-K outputs after repeated runs and inside a CUDA
// graph (the workspace must come back to zero); grouped: empty, one-row and tile-edge groups starting on any
// row, contiguous and masked, partial tiles whose token boxes reach into the next group's rows. Outputs poisoned
// before every run, fresh seeds per check. Each test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "tests/gpu/fp4_kernel_checks.hpp"

namespace shapescope::kernels {
namespace {

bool any_contains(const std::set<std::string>& names, const std::string& part) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

TEST(A16w4Tiled, DenseMatchesReferenceInEveryFp4Layout) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  // Llama-3.3-70B at TP2 (qkv, o) and TP4 (o); then K with a partial 64-step and 32-block (336), K off 8 with
  // partial 16- and 32-blocks (100), N off the 128-column tile, one column, the smallest K.
  const std::vector<WeightCase> model = {{"llama70b.qkv.tp2", 5120, 8192, 1},
                                         {"llama70b.o.tp2", 8192, 4096, 1},
                                         {"llama70b.o.tp4", 8192, 2048, 1}};
  const std::vector<WeightCase> unaligned = {{"partial_block", 200, 336, 1}, {"k_off_8", 72, 100, 1},
                                             {"n_off_tile", 129, 258, 1}, {"one_column", 1, 6, 1},
                                             {"k_two", 3, 2, 1}};
  std::set<std::string> launches;
  for (const BlockFormatId format : kFp4Formats) {
    CheckTally tally;
    launches.merge(check_fp4_dense(*device, "a16w4_tiled", format, model, {1, 17, 64, 65, 128, 129, 300, 1000},
                                   0x7f4000, tally));
    launches.merge(check_fp4_dense(*device, "a16w4_tiled", format, unaligned, {1, 5, 63, 64, 65, 130, 257},
                                   0x7f4000, tally));
    std::printf("  a16w4_tiled %s: %d checks, worst rel_err %.3e\n", format_name(format).c_str(), tally.checked,
                tally.worst);
  }
  // Every token tile ran, with K split and whole.
  EXPECT_TRUE(any_contains(launches, "_w128t32k")) << "no 32-token tile ran";
  EXPECT_TRUE(any_contains(launches, "_w128t64k")) << "no 64-token tile ran";
  EXPECT_TRUE(any_contains(launches, "_w128t128k")) << "no 128-token tile ran";
  EXPECT_TRUE(std::any_of(launches.begin(), launches.end(), [](const std::string& n) { return k_splits_of(n) == 1; }))
      << "no unsplit K ran";
  EXPECT_TRUE(std::any_of(launches.begin(), launches.end(), [](const std::string& n) { return k_splits_of(n) > 1; }))
      << "no split K ran";
}

TEST(A16w4Tiled, SplitKStaysExactOverRepeatedRunsAndGraphs) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  check_fp4_split_k_repeats(*device, "a16w4_tiled", 5120, 8192, 48, 0x7911);
}

TEST(A16w4Tiled, OddKIsRefusedWithOneLine) { check_fp4_odd_k_refused("a16w4_tiled", "a16w4_tiled_grouped"); }

TEST(A16w4Tiled, GroupedMatchesReferenceGroupByGroup) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  // Shapes of the nvfp4_targets problems with fewer experts, and a small odd one (K off 8, N off the tile); empty,
  // one-row and tile-edge groups, shifted so that groups start on odd rows at align 1.
  check_fp4_grouped(*device, "a16w4_tiled_grouped",
                    {{"targets.n4096.k1536", 3, 4096, 1536},
                     {"targets.n1024.k7168", 4, 1024, 7168},
                     {"unaligned", 5, 200, 100}},
                    {0, 1, 63, 64, 65, 0, 129, 2, 200, 0, 128, 3}, {0, 5}, 0x7a4000);
}

// The copy engine brings whole boxes of token rows: a group's partial last tile holds the next group's rows
// (contiguous at align 1) or padding, multiplied into token columns that nothing writes. Every group here ends
// inside a tile, most with another group right behind it.
TEST(A16w4Tiled, GroupedPartialTilesOverTheNextGroupsRowsStayExact) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  check_fp4_grouped(*device, "a16w4_tiled_grouped", {{"tile_edges.n256.k640", 6, 256, 640}},
                    {31, 33, 95, 1, 127, 250}, {0, 3}, 0x7b4000);
}

// Split K included.
TEST(A16w4Tiled, GroupedReplaysUnderACudaGraph) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  GroupedWeightShape weights{8, 4096, 7168};
  weights.format = BlockFormatId::nvfp4;
  check_fp4_grouped_graph_replay(*device, "a16w4_tiled_grouped", weights, {64, 0, 100, 3, 0, 248, 1, 70}, 0x79);
}

}  // namespace
}  // namespace shapescope::kernels
