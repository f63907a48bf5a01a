// The tiled W4A16 kernels (a16w4_tiled, a16w4_tiled_grouped) against the float64 reference in every FP4 layout
// they take (MXFP4, NVFP4, e2m1_e8m0_16): Llama-3.3-70B weight shapes, K with a partial last step and partial
// scale blocks, K off the 8-element activation rows, N off the 128-column tiles, M off the 32-, 64- and 128-token
// tiles from 1 up, every token tile and split and unsplit K; split-K outputs after repeated runs and inside a CUDA
// graph (the workspace must come back to zero); grouped: empty, one-row and tile-edge groups starting on any
// row, contiguous and masked. Outputs poisoned before every run, fresh seeds per check. Each test skips without
// a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/grouped_reference.hpp"
#include "kernels/kernel.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/reference_check.hpp"

namespace shapescope::kernels {
namespace {

const std::vector<BlockFormatId> kFp4Formats = {BlockFormatId::mxfp4, BlockFormatId::nvfp4,
                                                BlockFormatId::e2m1_e8m0_16};

std::string format_name(BlockFormatId format) { return std::string(to_string(format)); }

// Checks every M of `ms` on every shape; returns the launch names that ran.
std::set<std::string> check_dense(Device& device, BlockFormatId format, const std::vector<WeightCase>& shapes,
                                  const std::vector<int64_t>& ms, CheckTally& tally) {
  const KernelEntry& entry = find_kernel("a16w4_tiled");
  std::set<std::string> launches;
  uint64_t seed = 0x7f4000 + uint64_t(format) * 1000;
  for (const WeightCase& shape : shapes) {
    WeightShape weights{shape.n, shape.k, 1};
    weights.format = format;
    const auto session = entry.open(device, weights, ++seed);
    for (const int64_t m : ms) {
      SCOPED_TRACE(format_name(format) + " " + shape.label + " M=" + std::to_string(m) + " N=" +
                   std::to_string(shape.n) + " K=" + std::to_string(shape.k));
      EXPECT_FALSE(entry.unsupported_reason(GemmShape{m, shape.n, shape.k, 1}).has_value());
      const auto gemm = session->prepare(m, ++seed);
      const CheckResult result = gemm->check();
      EXPECT_EQ(result.unwritten, 0);
      EXPECT_GT(result.elements_checked, 0);
      EXPECT_LE(result.rel_err, kExpectedError) << gemm->launch_name();
      launches.insert(gemm->launch_name());
      ++tally.checked;
      tally.worst = std::max(tally.worst, result.rel_err);
    }
  }
  return launches;
}

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
    launches.merge(check_dense(*device, format, model, {1, 17, 64, 65, 128, 129, 300, 1000}, tally));
    launches.merge(check_dense(*device, format, unaligned, {1, 5, 63, 64, 65, 130, 257}, tally));
    std::printf("  a16w4_tiled %s: %d checks, worst rel_err %.3e\n", format_name(format).c_str(), tally.checked,
                tally.worst);
  }
  // Every token tile ran, with K split and whole.
  EXPECT_TRUE(any_contains(launches, "_w128t32k")) << "no 32-token tile ran";
  EXPECT_TRUE(any_contains(launches, "_w128t64k")) << "no 64-token tile ran";
  EXPECT_TRUE(any_contains(launches, "_w128t128k")) << "no 128-token tile ran";
  EXPECT_TRUE(any_contains(launches, "_split1")) << "no unsplit K ran";
  EXPECT_TRUE(std::any_of(launches.begin(), launches.end(),
                          [](const std::string& n) { return n.find("_split1") == std::string::npos; }))
      << "no split K ran";
}

// Split K sums partial tiles in an fp32 workspace that the last CTA of a tile leaves at zero: a workspace or
// counter left dirty would show on the next run, alone or replayed in a graph with programmatic launch.
TEST(A16w4Tiled, SplitKStaysExactOverRepeatedRunsAndGraphs) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const KernelEntry& entry = find_kernel("a16w4_tiled");
  WeightShape weights{5120, 8192, 1};
  weights.format = BlockFormatId::nvfp4;
  const auto session = entry.open(*device, weights, 0x7911);
  for (const bool programmatic : {false, true}) {
    device->set_programmatic_launch(programmatic);
    const auto gemm = session->prepare(48, 0x7912 + uint64_t(programmatic));
    const std::string name = gemm->launch_name();
    EXPECT_EQ(name.find("_split1"), std::string::npos) << name << ": this shape should split K";
    for (int repeat = 0; repeat < 3; ++repeat)
      EXPECT_TRUE(gemm->check().passed(kExpectedError)) << name << " repeat " << repeat;
    EXPECT_GT(device->capture(std::vector<PreparedGemm*>(16, gemm.get()))->replay_us(), 0.0);
    EXPECT_TRUE(gemm->check().passed(kExpectedError)) << name << " after a graph of 16 runs";
  }
  device->set_programmatic_launch(false);
}

TEST(A16w4Tiled, OddKIsRefusedWithOneLine) {
  register_cuda_kernels();
  const KernelEntry& entry = find_kernel("a16w4_tiled");
  const auto reason = entry.unsupported_reason(GemmShape{1, 64, 101, 1});
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("K=101"), std::string::npos) << *reason;
  EXPECT_EQ(reason->find('\n'), std::string::npos) << *reason;
  EXPECT_FALSE(entry.unsupported_reason(GemmShape{1, 64, 102, 1}).has_value());
  GroupedShape grouped;
  grouped.n = 64;
  grouped.k = 101;
  grouped.rows = {1, 2};
  EXPECT_TRUE(find_grouped_kernel("a16w4_tiled_grouped").unsupported_reason(grouped).has_value());
  grouped.k = 102;
  EXPECT_FALSE(find_grouped_kernel("a16w4_tiled_grouped").unsupported_reason(grouped).has_value());
}

GroupedShape grouped_shape(int64_t n, int64_t k, std::vector<int64_t> rows, GroupLayout layout, int64_t align) {
  GroupedShape shape;
  shape.n = n;
  shape.k = k;
  shape.rows = std::move(rows);
  shape.layout = layout;
  shape.align = align;
  if (layout == GroupLayout::masked) shape.max_m = std::max<int64_t>((shape.max_rows() + 63) / 64 * 64, 64);
  return shape;
}

TEST(A16w4Tiled, GroupedMatchesReferenceGroupByGroup) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const GroupedKernelEntry& entry = find_grouped_kernel("a16w4_tiled_grouped");
  struct Experts {
    std::string label;
    int64_t groups, n, k;
  };
  // Shapes of the nvfp4_targets problems with fewer experts, and a small odd one (K off 8, N off the tile).
  const std::vector<Experts> experts = {{"targets.n4096.k1536", 3, 4096, 1536},
                                        {"targets.n1024.k7168", 4, 1024, 7168},
                                        {"unaligned", 5, 200, 100}};
  uint64_t seed = 0x7a4000;
  for (const BlockFormatId format : kFp4Formats) {
    CheckTally tally;
    for (const Experts& e : experts) {
      GroupedWeightShape weights{e.groups, e.n, e.k};
      weights.format = format;
      const auto session = entry.open(*device, weights, ++seed);
      // Empty, one-row and tile-edge groups; every group after the first starts on an odd row at align 1.
      const std::vector<int64_t> edges = {0, 1, 63, 64, 65, 0, 129, 2, 200, 0, 128, 3};
      std::vector<int64_t> mixed, shifted, decode;
      for (int64_t g = 0; g < e.groups; ++g) {
        mixed.push_back(edges[std::size_t(g) % edges.size()]);
        shifted.push_back(edges[std::size_t(g + 5) % edges.size()]);
        decode.push_back((g * 7) % 3);
      }
      for (const auto& rows : {mixed, shifted, decode, std::vector<int64_t>(std::size_t(e.groups), 0)})
        for (const auto& [layout, align] : {std::pair{GroupLayout::contiguous, int64_t(1)},
                                            std::pair{GroupLayout::contiguous, int64_t(128)},
                                            std::pair{GroupLayout::masked, int64_t(1)}}) {
          const GroupedShape shape = grouped_shape(e.n, e.k, rows, layout, align);
          SCOPED_TRACE(format_name(format) + " " + e.label + " " + shape.layout_text() + " rows " +
                       std::to_string(shape.useful_rows()));
          ASSERT_FALSE(entry.unsupported_reason(shape).has_value());
          const auto gemm = session->prepare(shape, ++seed);
          const CheckResult result = gemm->check();
          EXPECT_EQ(result.unwritten, 0);
          EXPECT_EQ(result.elements_checked, int64_t(sample_grouped_output(shape, cuda::kCheckSampleElements).size()));
          EXPECT_LE(result.rel_err, kExpectedError) << gemm->launch_name();
          EXPECT_GE(gemm->executed_rows(), shape.useful_rows());
          ++tally.checked;
          tally.worst = std::max(tally.worst, result.rel_err);
        }
    }
    std::printf("  a16w4_tiled_grouped %s: %d checks, worst rel_err %.3e\n", format_name(format).c_str(),
                tally.checked, tally.worst);
  }
}

// A masked layout replays under a graph, split K included: run after run, and after a graph of several, the
// outputs still match.
TEST(A16w4Tiled, GroupedReplaysUnderACudaGraph) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  GroupedWeightShape weights{8, 4096, 7168};
  weights.format = BlockFormatId::nvfp4;
  const auto session = find_grouped_kernel("a16w4_tiled_grouped").open(*device, weights, 0x79);
  for (const bool programmatic : {false, true}) {
    device->set_programmatic_launch(programmatic);
    const GroupedShape shape = grouped_shape(4096, 7168, {64, 0, 100, 3, 0, 248, 1, 70}, GroupLayout::masked, 1);
    const auto gemm = session->prepare(shape, 0x7a + uint64_t(programmatic));
    EXPECT_TRUE(gemm->check().passed(kExpectedError)) << gemm->launch_name();
    EXPECT_GT(device->capture({gemm.get(), gemm.get(), gemm.get()})->replay_us(), 0.0);
    EXPECT_TRUE(gemm->check().passed(kExpectedError)) << gemm->launch_name() << " after a graph";
  }
  device->set_programmatic_launch(false);
}

}  // namespace
}  // namespace shapescope::kernels
