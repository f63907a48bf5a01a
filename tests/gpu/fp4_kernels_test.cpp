// Our W4A16 kernels (a16w4_blockscale, a16w4_blockscale_grouped) against the float64 reference in every FP4
// layout they take (MXFP4, NVFP4, e2m1_e8m0_16): Llama-3.3-70B and gpt-oss weight shapes, K with a partial last
// chunk and partial scale blocks, K off the 16-byte activation loads, N off the warp tiles, M from 1 up past
// the 16-row passes; K split over CTAs summed in a cluster and in the workspace, the clusters resident at once
// as queried and the choice they make; split-K outputs after repeated
// runs and inside a CUDA graph (the workspace must come back to zero); grouped: empty, one-row and tile-edge
// groups, contiguous at several alignments and masked.
// Outputs poisoned before every run, fresh seeds per check. Each test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "kernels/cuda/a16w4_blockscale_config.hpp"
#include "tests/gpu/fp4_kernel_checks.hpp"

namespace shapescope::kernels {
namespace {

TEST(Fp4Kernels, DenseMatchesReferenceInEveryFp4Layout) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  // Llama-3.3-70B at TP4 (qkv, o, down) and gpt-oss experts (K=2880: 22.5 chunks of 128); then K with a partial
  // 32-block (336), K off 8 and with partial 16- and 32-blocks (100), N off the 32-column warp tiles, one column.
  const std::vector<WeightCase> model = {{"llama70b.qkv.tp4", 2560, 8192, 1},
                                         {"llama70b.o.tp4", 8192, 2048, 1},
                                         {"llama70b.down.tp4", 8192, 7168, 1},
                                         {"gpt_oss.gate_up", 5760, 2880, 1}};
  const std::vector<WeightCase> unaligned = {{"partial_block", 200, 336, 1}, {"k_off_8", 72, 100, 1},
                                             {"n_off_tile", 129, 258, 1}, {"one_column", 1, 6, 1}};
  // Few warp tiles over a long K: 8 splits (the largest cluster) and 16 (past it, through the workspace).
  const std::vector<WeightCase> split = {{"eight_splits", 64, 4096, 1}, {"sixteen_splits", 256, 8192, 1}};
  for (const BlockFormatId format : kFp4Formats) {
    CheckTally tally;
    std::set<std::string> launches =
        check_fp4_dense(*device, "a16w4_blockscale", format, model, {1, 2, 3, 8, 9, 16, 17, 64}, 0xf4f4000, tally);
    launches.merge(
        check_fp4_dense(*device, "a16w4_blockscale", format, unaligned, {1, 5, 8, 15, 16, 33, 130}, 0xf4f4000, tally));
    launches.merge(check_fp4_dense(*device, "a16w4_blockscale", format, split, {1, 5, 9, 17}, 0xf4f4000, tally));
    std::printf("  a16w4_blockscale %s: %d checks, worst rel_err %.3e\n", format_name(format).c_str(), tally.checked,
                tally.worst);
    // These shapes reach every compiled instance (8 or 16 rows a warp, K over 1, 2 or 4 warps of a CTA), and
    // at both row counts K split over CTAs summed in a cluster and in the workspace.
    const auto ran = [&](const std::string& first, const std::string& second) {
      return std::any_of(launches.begin(), launches.end(), [&](const std::string& name) {
        return name.find(first) != std::string::npos && name.find(second) != std::string::npos;
      });
    };
    for (const std::string rows : {"_m8n", "_m16n"}) {
      for (const std::string warps_k : {"_wk1_", "_wk2_", "_wk4_"})
        EXPECT_TRUE(ran(rows, warps_k)) << format_name(format) << ": no check ran the instance" << rows << "*" << warps_k;
      EXPECT_TRUE(ran(rows, "_split8_cluster")) << format_name(format) << ": no 8-CTA cluster sum at" << rows;
      EXPECT_TRUE(ran(rows, "_split16")) << format_name(format) << ": no workspace sum at" << rows;
    }
  }
}

// Past the crossover M the dense kernel dequantizes the packed weights into bf16 inside the run and hands them to
// cuBLASLt (alpha the product's scale): the same checks, and the launch names say which path ran.
TEST(Fp4Kernels, DequantizingPathPastTheCrossoverMatchesReference) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const std::vector<WeightCase> model = {{"llama70b.o.tp4", 8192, 2048, 1}, {"gpt_oss.gate_up", 5760, 2880, 1}};
  const std::vector<WeightCase> unaligned = {{"partial_block", 200, 336, 1}, {"k_off_8", 72, 100, 1},
                                             {"n_off_tile", 129, 258, 1}};
  for (const BlockFormatId format : kFp4Formats) {
    CheckTally tally;
    check_fp4_dense(*device, "a16w4_blockscale", format, model, {256, 1000}, 0xf4f4000, tally);
    check_fp4_dense(*device, "a16w4_blockscale", format, unaligned, {257, 600}, 0xf4f4000, tally);
    std::printf("  a16w4_blockscale dequantizing %s: %d checks, worst rel_err %.3e\n", format_name(format).c_str(),
                tally.checked, tally.worst);
  }
  const KernelEntry& entry = find_kernel("a16w4_blockscale");
  WeightShape weights{8192, 2048, 1};
  weights.format = BlockFormatId::nvfp4;
  const auto session = entry.open(*device, weights, 77);
  EXPECT_EQ(session->prepare(1, 78)->launch_name().find("dequantize"), std::string::npos);
  EXPECT_NE(session->prepare(2048, 79)->launch_name().find("dequantize_bf16+cublaslt"), std::string::npos);
}

// Few warp tiles over a long K: 8 splits at M = 4, a grid of few clusters (one wave on any GPU that runs clusters
// of 8), summed in a cluster; Llama-3.3-70B qkv at TP4 with 13 splits at M = 17, more than a cluster takes, summed
// in the workspace.
TEST(Fp4Kernels, SplitKStaysExactOverRepeatedRunsAndGraphs) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  for (const std::string& name : check_fp4_split_k_repeats(*device, "a16w4_blockscale", 64, 4096, 4, 0x5911))
    EXPECT_NE(name.find("_cluster"), std::string::npos) << name;
  for (const std::string& name : check_fp4_split_k_repeats(*device, "a16w4_blockscale", 2560, 8192, 17, 0x5912))
    EXPECT_EQ(name.find("_cluster"), std::string::npos) << name;
}

// The clusters of each split resident at once, as queried: whole clusters fit in at most the CTA slots of a grid
// without clusters (four CTAs an SM), and the dense kernel's launch sums Llama-3.3-70B qkv at TP4, M = 4 (6
// splits), in a cluster exactly where its heuristic with these figures says so.
TEST(Fp4Kernels, ClustersResidentAreQueriedAndDecideTheSum) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const cuda::A16w4DeviceSpec spec = cuda::a16w4_current_spec();
  std::printf("  a16w4 clusters resident at once on %d SMs, splits 2..%d:", spec.multiprocessors,
              cuda::kA16w4MostClusterSplits);
  for (int split = 2; split <= cuda::kA16w4MostClusterSplits; ++split) {
    std::printf(" %d", spec.clusters_by_split[std::size_t(split)]);
    EXPECT_GT(spec.clusters_by_split[std::size_t(split)], 0) << "split " << split;
    EXPECT_LE(int64_t(spec.clusters_by_split[std::size_t(split)]) * split,
              cuda::a16w4_resident_ctas(spec.multiprocessors))
        << "split " << split;
  }
  std::printf("\n");
  const cuda::A16w4Config expected = cuda::choose_a16w4_dense_config(4, 80, 64, spec);
  EXPECT_EQ(expected.split_k, 6);
  for (const std::string& name : check_fp4_split_k_repeats(*device, "a16w4_blockscale", 2560, 8192, 4, 0x5913))
    EXPECT_EQ(name.find("_cluster") != std::string::npos, expected.cluster_sum) << name;
}

// The persistent grid (SHAPESCOPE_A16W4_RUNS=1 forces it at shapes its estimate leaves to the CTA-a-tile grid):
// runs of one unit that cut every tile into pieces summed in the workspace (Llama-3.3-70B o at TP4, gpt-oss
// gate_up, K with partial chunks and blocks, N off the warp tiles), runs of several whole tiles of one chunk
// (135168 x 128) and runs that straddle tiles of two chunks, the last partial (96000 x 200); M over one, two
// and three tiles of rows; then repeated runs and graphs with and without PDL (the workspace back at zero).
TEST(Fp4Kernels, PersistentWarpRunsMatchReferenceInEveryFp4Layout) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  struct ForcedRuns {
    ForcedRuns() { setenv("SHAPESCOPE_A16W4_RUNS", "1", 1); }
    ~ForcedRuns() { unsetenv("SHAPESCOPE_A16W4_RUNS"); }
  } forced;
  const std::vector<WeightCase> shapes = {{"llama70b.o.tp4", 8192, 2048, 1},   {"gpt_oss.gate_up", 5760, 2880, 1},
                                          {"partial_block", 200, 336, 1},      {"k_off_8", 72, 100, 1},
                                          {"n_off_tile", 129, 258, 1},         {"one_column", 1, 6, 1},
                                          {"whole_tiles", 135168, 128, 1},     {"straddling", 96000, 200, 1}};
  for (const BlockFormatId format : kFp4Formats) {
    CheckTally tally;
    const std::set<std::string> launches =
        check_fp4_dense(*device, "a16w4_blockscale", format, shapes, {1, 5, 8, 9, 16, 17, 33}, 0xf4f5000, tally);
    std::printf("  a16w4_blockscale persistent %s: %d checks, worst rel_err %.3e\n", format_name(format).c_str(),
                tally.checked, tally.worst);
    for (const std::string& name : launches) EXPECT_NE(name.find("_runs"), std::string::npos) << name;
  }
  for (const int64_t m : {1, 17})
    for (const std::string& name : check_fp4_split_k_repeats(*device, "a16w4_blockscale", 96000, 200, m, 0x5914))
      EXPECT_NE(name.find("_runs"), std::string::npos) << name;
}

TEST(Fp4Kernels, OddKIsRefusedWithOneLine) { check_fp4_odd_k_refused("a16w4_blockscale", "a16w4_blockscale_grouped"); }

TEST(Fp4Kernels, GroupedMatchesReferenceGroupByGroup) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  // gpt-oss-120b at EP8 (16 experts of gate_up and down, K=2880 with a partial chunk), and a small odd shape.
  check_fp4_grouped(*device, "a16w4_blockscale_grouped",
                    {{"gpt_oss.gate_up.ep8", 16, 5760, 2880},
                     {"gpt_oss.down.ep8", 16, 2880, 2880},
                     {"unaligned", 5, 200, 100}},
                    {0, 1, 7, 8, 9, 16, 17, 0, 33, 2, 0, 64, 65, 3, 0, 5}, {0}, 0x9f4000);
}

TEST(Fp4Kernels, GroupedReplaysUnderACudaGraph) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  GroupedWeightShape weights{16, 5760, 2880};
  weights.format = BlockFormatId::mxfp4;
  check_fp4_grouped_graph_replay(*device, "a16w4_blockscale_grouped", weights,
                                 {1, 0, 2, 0, 0, 3, 1, 0, 0, 0, 4, 0, 1, 0, 0, 2}, 0x77);
}

}  // namespace
}  // namespace shapescope::kernels
