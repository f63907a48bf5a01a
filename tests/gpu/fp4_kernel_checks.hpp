// The checks every W4A16 kernel pair (dense + grouped) goes through, whatever its design: each FP4 layout
// against the float64 reference with outputs poisoned and fresh seeds, split-K workspaces back to zero after
// repeated runs and graph replays, odd K refused with one line, grouped layouts with empty, one-row and
// tile-edge groups. The test files say which shapes and M matter to each kernel's tiles.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/grouped_reference.hpp"
#include "kernels/kernel.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/reference_check.hpp"

namespace shapescope::kernels {

inline const std::vector<BlockFormatId> kFp4Formats = {BlockFormatId::mxfp4, BlockFormatId::nvfp4,
                                                       BlockFormatId::e2m1_e8m0_16};

inline std::string format_name(BlockFormatId format) { return std::string(to_string(format)); }

// The K splits a W4A16 launch name states ("..._split13+pdl" is 13, not 1): a plain substring test for
// "_split1" also matches _split10 to _split19.
inline int k_splits_of(const std::string& launch_name) {
  const std::size_t at = launch_name.rfind("_split");
  EXPECT_NE(at, std::string::npos) << launch_name << ": no _split in the launch name";
  if (at == std::string::npos) return 0;
  return std::atoi(launch_name.c_str() + at + 6);
}

// Checks every M of `ms` on every shape with `kernel`; returns the launch names that ran.
inline std::set<std::string> check_fp4_dense(Device& device, const std::string& kernel, BlockFormatId format,
                                             const std::vector<WeightCase>& shapes, const std::vector<int64_t>& ms,
                                             uint64_t seed, CheckTally& tally) {
  const KernelEntry& entry = find_kernel(kernel);
  std::set<std::string> launches;
  seed += uint64_t(format) * 1000;
  for (const WeightCase& shape : shapes) {
    WeightShape weights{shape.n, shape.k, 1};
    weights.format = format;
    const auto session = entry.open(device, weights, ++seed);
    for (const int64_t m : ms) {
      SCOPED_TRACE(kernel + " " + format_name(format) + " " + shape.label + " M=" + std::to_string(m) + " N=" +
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

// Split K sums partial tiles in an fp32 workspace that the last CTA of a tile leaves at zero (or in a cluster's
// shared memory): a workspace or counter left dirty would show on the next run, alone or replayed in a graph
// with programmatic launch. Returns the launch names.
inline std::set<std::string> check_fp4_split_k_repeats(Device& device, const std::string& kernel, int64_t n,
                                                       int64_t k, int64_t m, uint64_t seed) {
  const KernelEntry& entry = find_kernel(kernel);
  WeightShape weights{n, k, 1};
  weights.format = BlockFormatId::nvfp4;
  const auto session = entry.open(device, weights, seed);
  std::set<std::string> launches;
  for (const bool programmatic : {false, true}) {
    device.set_programmatic_launch(programmatic);
    const auto gemm = session->prepare(m, seed + 1 + uint64_t(programmatic));
    const std::string name = gemm->launch_name();
    launches.insert(name);
    if (name.find("_runs") == std::string::npos) {  // a persistent grid's pieces of tiles are summed alike
      EXPECT_GT(k_splits_of(name), 1) << name << ": this shape should split K";
    }
    for (int repeat = 0; repeat < 3; ++repeat)
      EXPECT_TRUE(gemm->check().passed(kExpectedError)) << name << " repeat " << repeat;
    EXPECT_GT(device.capture(std::vector<PreparedGemm*>(16, gemm.get()))->replay_us(), 0.0);
    EXPECT_TRUE(gemm->check().passed(kExpectedError)) << name << " after a graph of 16 runs";
  }
  device.set_programmatic_launch(false);
  return launches;
}

// FP4 packs two elements a byte: odd K is refused with one line naming it, by the dense and the grouped kernel.
inline void check_fp4_odd_k_refused(const std::string& dense, const std::string& grouped) {
  register_cuda_kernels();
  const KernelEntry& entry = find_kernel(dense);
  const auto reason = entry.unsupported_reason(GemmShape{1, 64, 101, 1});
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("K=101"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("odd"), std::string::npos) << *reason;
  EXPECT_EQ(reason->find('\n'), std::string::npos) << *reason;
  EXPECT_FALSE(entry.unsupported_reason(GemmShape{1, 64, 102, 1}).has_value());
  GroupedShape shape;
  shape.n = 64;
  shape.k = 101;
  shape.rows = {1, 2};
  EXPECT_TRUE(find_grouped_kernel(grouped).unsupported_reason(shape).has_value());
  shape.k = 102;
  EXPECT_FALSE(find_grouped_kernel(grouped).unsupported_reason(shape).has_value());
}

struct Fp4Experts {
  std::string label;
  int64_t groups, n, k;
};

// Every expert shape in every FP4 layout, rows per group drawn from `edges` starting at each of `starts` (so
// groups start on odd rows at align 1), a decode-sized pattern and all-empty groups, each contiguous at align 1
// and 128 and masked.
inline void check_fp4_grouped(Device& device, const std::string& kernel, const std::vector<Fp4Experts>& experts,
                              const std::vector<int64_t>& edges, const std::vector<std::size_t>& starts,
                              uint64_t seed) {
  const GroupedKernelEntry& entry = find_grouped_kernel(kernel);
  for (const BlockFormatId format : kFp4Formats) {
    CheckTally tally;
    for (const Fp4Experts& e : experts) {
      GroupedWeightShape weights{e.groups, e.n, e.k};
      weights.format = format;
      const auto session = entry.open(device, weights, ++seed);
      std::vector<std::vector<int64_t>> patterns;
      for (const std::size_t start : starts) {
        std::vector<int64_t> rows;
        for (int64_t g = 0; g < e.groups; ++g) rows.push_back(edges[(std::size_t(g) + start) % edges.size()]);
        patterns.push_back(rows);
      }
      std::vector<int64_t> decode;
      for (int64_t g = 0; g < e.groups; ++g) decode.push_back((g * 7) % 3);
      patterns.push_back(decode);
      patterns.push_back(std::vector<int64_t>(std::size_t(e.groups), 0));
      for (const auto& rows : patterns)
        for (const auto& [layout, align] : {std::pair{GroupLayout::contiguous, int64_t(1)},
                                            std::pair{GroupLayout::contiguous, int64_t(128)},
                                            std::pair{GroupLayout::masked, int64_t(1)}}) {
          const GroupedShape shape = lay_out_groups(e.n, e.k, rows, layout, align, 64);
          SCOPED_TRACE(kernel + " " + format_name(format) + " " + e.label + " " + shape.layout_text() + " rows " +
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
    std::printf("  %s %s: %d checks, worst rel_err %.3e\n", kernel.c_str(), format_name(format).c_str(),
                tally.checked, tally.worst);
  }
}

// A masked layout replays under a graph: run after run, and after a graph of several, the outputs still match.
inline void check_fp4_grouped_graph_replay(Device& device, const std::string& kernel, GroupedWeightShape weights,
                                           const std::vector<int64_t>& rows, uint64_t seed) {
  const auto session = find_grouped_kernel(kernel).open(device, weights, seed);
  for (const bool programmatic : {false, true}) {
    device.set_programmatic_launch(programmatic);
    const GroupedShape shape = lay_out_groups(weights.n, weights.k, rows, GroupLayout::masked, 1, 64);
    const auto gemm = session->prepare(shape, seed + 1 + uint64_t(programmatic));
    EXPECT_TRUE(gemm->check().passed(kExpectedError)) << gemm->launch_name();
    EXPECT_GT(device.capture({gemm.get(), gemm.get(), gemm.get()})->replay_us(), 0.0);
    EXPECT_TRUE(gemm->check().passed(kExpectedError)) << gemm->launch_name() << " after a graph";
  }
  device.set_programmatic_launch(false);
}

}  // namespace shapescope::kernels
