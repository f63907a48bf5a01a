// The grouped CUDA kernels (fp8_blockscale_grouped, cublaslt_fp8_blockscale_grouped_loop,
// cublaslt_bf16_grouped_loop) against the float64 reference, group by group: DeepSeek-V3
// and Qwen3-235B experts at EP8, a K with a partial scale block; empty groups, one-row
// groups, groups on and past the tile edges, groups starting on every row offset mod 4 and
// many mod 128; contiguous at align 1, 2, 3, 64, 128 and masked slots of 64 rows and of
// exactly the largest group (odd sizes included); decode loads (a few rows per expert) and
// prefill loads. Then a CUDA graph of each kernel's run() replays correctly, executed rows
// count each kernel's padding, and a problem with no rows launches nothing.
// Each test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_grouped_prepared_gemm.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/grouped_reference.hpp"
#include "kernels/kernel.hpp"
#include "profiler/moe_routing.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace shapescope::kernels {
namespace {

constexpr double kThreshold = 1e-2;
constexpr double kExpectedError = 5e-3;  // bf16 rounding; a wrong expert, row or K block gives O(1)

const std::vector<std::string> kGroupedKernels = {"fp8_blockscale_grouped", "cublaslt_fp8_blockscale_grouped_loop",
                                                  "cublaslt_bf16_grouped_loop"};

struct ExpertShape {
  std::string label;
  int64_t groups, n, k;
};

// DeepSeek-V3 EP8 (32 experts per GPU), Qwen3-235B EP8 (16), and gpt-oss-like K=2880 (a partial K block).
const std::vector<ExpertShape> kShapes = {{"dsv3.gate_up.ep8", 32, 4096, 7168},
                                          {"dsv3.down.ep8", 32, 7168, 2048},
                                          {"qwen3_235b.gate_up.ep8", 16, 3072, 4096},
                                          {"qwen3_235b.down.ep8", 16, 4096, 1536},
                                          {"partial_k", 8, 2880, 2880}};

// Rows per group: empty and one-row groups, tile edges (63/64/65, 127/128/129, 191/192/193),
// a decode load (0-2 rows each), rows that move each next group's first row by a different
// offset (every residue mod 4 and up to 29 residues mod 128 at align 1), a few tall groups among
// tiny ones (their tiles in several bands) and an all-empty problem.
std::vector<std::vector<int64_t>> row_patterns(int64_t groups, int64_t k) {
  const std::vector<int64_t> edges = {0, 1, 63, 64, 65, 0, 127, 128, 129, 191, 192, 193, 7, 300, 0, 2};
  std::vector<std::vector<int64_t>> patterns;
  std::vector<int64_t> mixed(static_cast<std::size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) mixed[std::size_t(g)] = edges[std::size_t(g) % edges.size()];
  patterns.push_back(mixed);
  std::vector<int64_t> decode(static_cast<std::size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) decode[std::size_t(g)] = (g * 7) % 3;
  patterns.push_back(decode);
  std::vector<int64_t> offsets(static_cast<std::size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) offsets[std::size_t(g)] = 1 + (g * 37) % 131;
  patterns.push_back(offsets);
  // Groups whose A outgrows half a 50 MB L2 (ours walks their tiles in bands, a partial last one among them).
  const int64_t tall_rows = (int64_t(26) << 20) / k;
  std::vector<int64_t> tall(static_cast<std::size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) tall[std::size_t(g)] = g % 8 == 3 ? tall_rows + 67 * g : g % 3;
  patterns.push_back(tall);
  patterns.push_back(std::vector<int64_t>(std::size_t(groups), 0));
  return patterns;
}

// masked: slots of `align` rows past the largest group
GroupedShape lay_out(const ExpertShape& expert, const std::vector<int64_t>& rows, GroupLayout layout, int64_t align) {
  return lay_out_groups(expert.n, expert.k, rows, layout, align, align);
}

struct Tally {
  int checked = 0;
  double worst = 0;
};

void check_kernel(const std::string& kernel_name, Device& device, Tally& tally) {
  const GroupedKernelEntry& entry = find_grouped_kernel(kernel_name);
  uint64_t seed = 0x6e0000 + std::hash<std::string>{}(kernel_name) % 1000;
  for (const ExpertShape& expert : kShapes) {
    const auto session = entry.open(device, GroupedWeightShape{expert.groups, expert.n, expert.k}, ++seed);
    for (const std::vector<int64_t>& rows : row_patterns(expert.groups, expert.k)) {
      for (const auto& [layout, align] : {std::pair{GroupLayout::contiguous, int64_t(1)},
                                          std::pair{GroupLayout::contiguous, int64_t(2)},
                                          std::pair{GroupLayout::contiguous, int64_t(3)},
                                          std::pair{GroupLayout::contiguous, int64_t(64)},
                                          std::pair{GroupLayout::contiguous, int64_t(128)},
                                          std::pair{GroupLayout::masked, int64_t(1)},
                                          std::pair{GroupLayout::masked, int64_t(64)}}) {
        const GroupedShape shape = lay_out(expert, rows, layout, align);
        SCOPED_TRACE(kernel_name + " " + expert.label + " " + shape.layout_text() + " rows " +
                     std::to_string(shape.useful_rows()) + " in " + std::to_string(shape.active_groups()) + " groups");
        const auto reason = entry.unsupported_reason(shape);  // every kernel takes groups starting on any row
        // Masked slots as tall as the tallest group can outgrow 32-bit element indexing: a kernel that indexes
        // with 32 bits refuses them for that reason alone.
        if (reason && shape.layout_rows() * std::max(shape.n, shape.k) > int64_t(INT32_MAX)) {
          EXPECT_NE(reason->find("2^31"), std::string::npos) << *reason;
          continue;
        }
        ASSERT_FALSE(reason.has_value()) << *reason;
        const auto gemm = session->prepare(shape, ++seed);
        const CheckResult result = gemm->check();
        EXPECT_EQ(result.unwritten, 0);
        const auto sampled = sample_grouped_output(shape, cuda::kCheckSampleElements);
        EXPECT_EQ(result.elements_checked, int64_t(sampled.size()));
        EXPECT_LE(result.rel_err, kExpectedError);
        EXPECT_TRUE(result.passed(kThreshold));
        EXPECT_GE(gemm->executed_rows(), shape.useful_rows());
        ++tally.checked;
        tally.worst = std::max(tally.worst, result.rel_err);
        if (!result.passed(kExpectedError))
          std::printf("  FAIL %s %s %s: rel_err %.3e unwritten %ld (%s)\n", kernel_name.c_str(), expert.label.c_str(),
                      shape.layout_text().c_str(), result.rel_err, long(result.unwritten), gemm->launch_name().c_str());
      }
    }
  }
}

class GroupedKernels : public ::testing::TestWithParam<std::string> {};

TEST_P(GroupedKernels, MatchTheReferenceGroupByGroup) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  Tally tally;
  check_kernel(GetParam(), *device, tally);
  std::printf("  %s: %d checks, worst rel_err %.3e\n", GetParam().c_str(), tally.checked, tally.worst);
}

// Routed decode and prefill loads of DeepSeek-V3 at EP8, graph-captured: the whole grouped
// call replays as one unit and still matches the reference afterwards.
TEST_P(GroupedKernels, RoutedLoadsReplayUnderACudaGraph) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const GroupedKernelEntry& entry = find_grouped_kernel(GetParam());
  const auto session = entry.open(*device, GroupedWeightShape{32, 4096, 7168}, 91);
  const profiler::Router router(profiler::parse_routing("lognormal:1.0"), 256, 8, 5);
  for (const int64_t tokens : {16, 256, 4096}) {
    const GroupedShape shape = lay_out({"dsv3.gate_up.ep8", 32, 4096, 7168},
                                       profiler::local_rows(router.expert_rows(tokens, 17 + tokens), 8),
                                       GroupLayout::contiguous, 128);
    SCOPED_TRACE(GetParam() + " tokens " + std::to_string(tokens));
    const auto gemm = session->prepare(shape, 92 + tokens);
    EXPECT_TRUE(gemm->check().passed(kExpectedError));
    const auto graph = device->capture({gemm.get(), gemm.get(), gemm.get()});
    const double us = graph->replay_us();
    EXPECT_GT(us, 0);
    const CheckResult after = gemm->check();
    EXPECT_TRUE(after.passed(kExpectedError)) << after.rel_err;
    std::printf("  %s %ld tokens (%ld rows in %ld experts): %.1f us per run in a graph of 3; %s\n", GetParam().c_str(),
                long(tokens), long(shape.useful_rows()), long(shape.active_groups()), us / 3,
                gemm->launch_name().c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(AllGrouped, GroupedKernels, ::testing::ValuesIn(kGroupedKernels));

TEST(GroupedKernelsPadding, ExecutedRowsCountEachKernelsPadding) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  GroupedShape shape = lay_out({"small", 4, 512, 256}, {1, 0, 65, 6}, GroupLayout::contiguous, 1);
  const auto loop = find_grouped_kernel("cublaslt_fp8_blockscale_grouped_loop").open(*device, {4, 512, 256}, 3);
  EXPECT_EQ(loop->prepare(shape, 4)->executed_rows(), 4 + 68 + 8);  // cuBLASLt block-scaled: M % 4 == 0 per call
  const auto bf16 = find_grouped_kernel("cublaslt_bf16_grouped_loop").open(*device, {4, 512, 256}, 3);
  EXPECT_EQ(bf16->prepare(shape, 4)->executed_rows(), 72);
  const auto ours = find_grouped_kernel("fp8_blockscale_grouped").open(*device, {4, 512, 256}, 3);
  const int64_t executed = ours->prepare(shape, 4)->executed_rows();
  EXPECT_TRUE(executed == 64 + 128 + 64 || executed == 128 * 3 || executed == 192 * 3) << executed;  // whole tiles
}

// No group with rows: ours launches nothing (the host knows the prepared counts) and its
// launch name says so; the output is still left untouched.
TEST(GroupedKernelsEmpty, OursLaunchesNothingWithoutRows) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const auto ours = find_grouped_kernel("fp8_blockscale_grouped").open(*device, {8, 4096, 7168}, 5);
  for (const GroupLayout layout : {GroupLayout::contiguous, GroupLayout::masked}) {
    GroupedShape shape = lay_out({"empty", 8, 4096, 7168}, std::vector<int64_t>(8, 0), layout, 128);
    if (layout == GroupLayout::masked) shape.max_m = 64;
    const auto gemm = ours->prepare(shape, 6);
    EXPECT_NE(gemm->launch_name().find("nothing launched"), std::string::npos) << gemm->launch_name();
    EXPECT_TRUE(gemm->check().passed(kExpectedError));
    EXPECT_EQ(gemm->executed_rows(), 0);
    const auto graph = device->capture({gemm.get()});
    EXPECT_GE(graph->replay_us(), 0);
  }
  const GroupedShape one_row = lay_out({"one", 8, 4096, 7168}, {0, 0, 1, 0, 0, 0, 0, 0}, GroupLayout::masked, 64);
  const auto gemm = ours->prepare(one_row, 7);
  EXPECT_EQ(gemm->launch_name().find("nothing launched"), std::string::npos) << gemm->launch_name();
  EXPECT_TRUE(gemm->check().passed(kExpectedError));
}

TEST(GroupedKernelsRegistry, CublasLtGroupedApiIsDetectedAtBuildTime) {
  register_cuda_kernels();
  const bool registered = std::any_of(grouped_kernel_registry().begin(), grouped_kernel_registry().end(),
                                      [](const GroupedKernelEntry& e) { return e.name == "cublaslt_fp8_blockscale_grouped"; });
  EXPECT_FALSE(registered);  // not written yet: the build says why
  EXPECT_NE(missing_grouped_kernels().find("cublaslt_fp8_blockscale_grouped"), std::string::npos);
}

}  // namespace
}  // namespace shapescope::kernels
