// Our W4A16 kernels (a16w4_blockscale, a16w4_blockscale_grouped) against the float64 reference in every FP4
// layout they take (MXFP4, NVFP4, e2m1_e8m0_16): Llama-3.3-70B and gpt-oss weight shapes, K with a partial last
// chunk and partial scale blocks, K off the 16-byte activation loads, N off the warp tiles, M from 1 up past
// the 16-row passes; split-K outputs after repeated runs and inside a CUDA graph (the workspace must come back
// to zero); grouped: empty, one-row and tile-edge groups, contiguous at several alignments and masked.
// Outputs poisoned before every run, fresh seeds per check. Each test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
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

void check_dense(Device& device, BlockFormatId format, const std::vector<WeightCase>& shapes,
                 const std::vector<int64_t>& ms, CheckTally& tally) {
  const KernelEntry& entry = find_kernel("a16w4_blockscale");
  uint64_t seed = 0xf4f4000 + uint64_t(format) * 1000;
  for (const WeightCase& shape : shapes) {
    WeightShape weights{shape.n, shape.k, 1};
    weights.format = format;
    const auto session = entry.open(device, weights, ++seed);
    for (const int64_t m : ms) {
      SCOPED_TRACE(format_name(format) + " " + shape.label + " M=" + std::to_string(m) + " N=" +
                   std::to_string(shape.n) + " K=" + std::to_string(shape.k));
      ASSERT_FALSE(entry.unsupported_reason(GemmShape{m, shape.n, shape.k, 1}).has_value());
      const auto gemm = session->prepare(m, ++seed);
      const CheckResult result = gemm->check();
      EXPECT_EQ(result.unwritten, 0);
      EXPECT_GT(result.elements_checked, 0);
      EXPECT_LE(result.rel_err, kExpectedError) << gemm->launch_name();
      ++tally.checked;
      tally.worst = std::max(tally.worst, result.rel_err);
    }
  }
}

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
  for (const BlockFormatId format : kFp4Formats) {
    CheckTally tally;
    check_dense(*device, format, model, {1, 2, 3, 8, 9, 16, 17, 64}, tally);
    check_dense(*device, format, unaligned, {1, 5, 8, 15, 16, 33, 130}, tally);
    std::printf("  a16w4_blockscale %s: %d checks, worst rel_err %.3e\n", format_name(format).c_str(), tally.checked,
                tally.worst);
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
    check_dense(*device, format, model, {256, 1000}, tally);
    check_dense(*device, format, unaligned, {257, 600}, tally);
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

// Split K sums partial tiles in an fp32 workspace that the last CTA of a tile leaves at zero: a workspace or
// counter left dirty would show on the next run, alone or replayed in a graph with programmatic launch.
TEST(Fp4Kernels, SplitKStaysExactOverRepeatedRunsAndGraphs) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const KernelEntry& entry = find_kernel("a16w4_blockscale");
  WeightShape weights{2560, 8192, 1};
  weights.format = BlockFormatId::nvfp4;
  const auto session = entry.open(*device, weights, 0x5911);
  for (const bool programmatic : {false, true}) {
    device->set_programmatic_launch(programmatic);
    const auto gemm = session->prepare(4, 0x5912 + uint64_t(programmatic));
    const std::string name = gemm->launch_name();
    EXPECT_EQ(name.find("_split1"), std::string::npos) << name << ": this shape should split K";
    for (int repeat = 0; repeat < 3; ++repeat)
      EXPECT_TRUE(gemm->check().passed(kExpectedError)) << name << " repeat " << repeat;
    EXPECT_GT(device->capture(std::vector<PreparedGemm*>(16, gemm.get()))->replay_us(), 0.0);
    EXPECT_TRUE(gemm->check().passed(kExpectedError)) << name << " after a graph of 16 runs";
  }
  device->set_programmatic_launch(false);
}

TEST(Fp4Kernels, OddKIsRefusedWithOneLine) {
  register_cuda_kernels();
  const KernelEntry& entry = find_kernel("a16w4_blockscale");
  const auto reason = entry.unsupported_reason(GemmShape{1, 64, 101, 1});
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("odd"), std::string::npos) << *reason;
  EXPECT_FALSE(entry.unsupported_reason(GemmShape{1, 64, 102, 1}).has_value());
  GroupedShape grouped;
  grouped.n = 64;
  grouped.k = 101;
  grouped.rows = {1, 2};
  EXPECT_TRUE(find_grouped_kernel("a16w4_blockscale_grouped").unsupported_reason(grouped).has_value());
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

TEST(Fp4Kernels, GroupedMatchesReferenceGroupByGroup) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const GroupedKernelEntry& entry = find_grouped_kernel("a16w4_blockscale_grouped");
  struct Experts {
    std::string label;
    int64_t groups, n, k;
  };
  // gpt-oss-120b at EP8 (16 experts of gate_up and down, K=2880 with a partial chunk), and a small odd shape.
  const std::vector<Experts> experts = {{"gpt_oss.gate_up.ep8", 16, 5760, 2880},
                                        {"gpt_oss.down.ep8", 16, 2880, 2880},
                                        {"unaligned", 5, 200, 100}};
  uint64_t seed = 0x9f4000;
  for (const BlockFormatId format : kFp4Formats) {
    CheckTally tally;
    for (const Experts& e : experts) {
      GroupedWeightShape weights{e.groups, e.n, e.k};
      weights.format = format;
      const auto session = entry.open(*device, weights, ++seed);
      std::vector<std::vector<int64_t>> patterns;
      const std::vector<int64_t> edges = {0, 1, 7, 8, 9, 16, 17, 0, 33, 2, 0, 64, 65, 3, 0, 5};
      std::vector<int64_t> mixed, decode;
      for (int64_t g = 0; g < e.groups; ++g) {
        mixed.push_back(edges[std::size_t(g) % edges.size()]);
        decode.push_back((g * 7) % 3);
      }
      patterns = {mixed, decode, std::vector<int64_t>(std::size_t(e.groups), 0)};
      for (const auto& rows : patterns)
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
    std::printf("  a16w4_blockscale_grouped %s: %d checks, worst rel_err %.3e\n", format_name(format).c_str(),
                tally.checked, tally.worst);
  }
}

// A masked layout replays under a graph: run after run, and after a graph of several, the outputs still match.
TEST(Fp4Kernels, GroupedReplaysUnderACudaGraph) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  GroupedWeightShape weights{16, 5760, 2880};
  weights.format = BlockFormatId::mxfp4;
  const auto session = find_grouped_kernel("a16w4_blockscale_grouped").open(*device, weights, 0x77);
  for (const bool programmatic : {false, true}) {
    device->set_programmatic_launch(programmatic);
    const GroupedShape shape =
        grouped_shape(5760, 2880, {1, 0, 2, 0, 0, 3, 1, 0, 0, 0, 4, 0, 1, 0, 0, 2}, GroupLayout::masked, 1);
    const auto gemm = session->prepare(shape, 0x78 + uint64_t(programmatic));
    EXPECT_TRUE(gemm->check().passed(kExpectedError)) << gemm->launch_name();
    EXPECT_GT(device->capture({gemm.get(), gemm.get(), gemm.get()})->replay_us(), 0.0);
    EXPECT_TRUE(gemm->check().passed(kExpectedError)) << gemm->launch_name() << " after a graph";
  }
  device->set_programmatic_launch(false);
}

}  // namespace
}  // namespace shapescope::kernels
