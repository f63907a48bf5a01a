// The correctness set our GPU kernels share on either GPU backend (tests/gpu on CUDA, tests/hip on
// HIP): catalog weight shapes, M lists, and a check of every (shape, M) against the float64 reference,
// the output poisoned before the run, fresh seeds per check.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/model_catalog.hpp"
#include "common/shape_axes.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels {

inline constexpr double kThreshold = 1e-2;  // the profile's numerical_fail threshold
// bf16 output rounding alone gives ~2e-3; a wrong K block or scale gives O(1).
inline constexpr double kExpectedError = 5e-3;

struct WeightCase {
  std::string label;
  int64_t n, k, batch_count;
};

// Each (N, K) of batch 1 once, from the shipped catalog found as profile finds it (so a carried binary
// works): the one declaration of these shape lists.
inline std::vector<WeightCase> catalog_shapes(const std::vector<std::string>& models, const std::string& module,
                                              int tp) {
  const ModelCatalog catalog = ModelCatalog::load_default();
  std::vector<GemmProblem> problems;
  for (const std::string& model : models) {
    const std::vector<GemmProblem> layers = catalog.problems(model, module, tp);
    problems.insert(problems.end(), layers.begin(), layers.end());
  }
  std::vector<WeightCase> shapes;
  for (const GemmProblem& problem : distinct_shapes(problems))
    if (problem.batch_count == 1) shapes.push_back({problem.model + "." + problem.module, problem.n, problem.k, 1});
  return shapes;
}
inline std::vector<WeightCase> catalog_tp8_shapes(const std::vector<std::string>& models) {
  return catalog_shapes(models, "all", 8);
}

// DeepSeek-V3's large TP1 GEMMs: deep K (144 blocks), wide N (288 tiles), 264 MB of weights.
inline std::vector<WeightCase> deepseek_tp1_large_shapes() {
  std::vector<WeightCase> shapes;
  for (const char* module : {"down_proj", "q_b_proj", "gate_up_proj"})
    for (const WeightCase& shape : catalog_shapes({"deepseek_v3"}, module, 1)) shapes.push_back(shape);
  return shapes;
}

inline std::vector<WeightCase> deepseek_tp8_shapes() { return catalog_tp8_shapes({"deepseek_v3"}); }
// Partial scale blocks included (K=192, N=192).
inline std::vector<WeightCase> qwen3_tp8_shapes() { return catalog_tp8_shapes({"qwen3_235b_a22b", "qwen3_30b_a3b"}); }

struct CheckTally {
  int checked = 0;
  double worst = 0;
};

inline void check_shapes(const std::string& kernel_name, Device& device, const std::vector<WeightCase>& shapes,
                  const std::vector<int64_t>& ms, CheckTally& tally) {
  const KernelEntry& entry = find_kernel(kernel_name);
  uint64_t seed = 0x0c0ffee0000 + std::hash<std::string>{}(kernel_name) % 100000;
  for (const WeightCase& shape : shapes) {
    const auto session = entry.open(device, WeightShape{shape.n, shape.k, shape.batch_count}, ++seed);
    for (const int64_t m : ms) {
      SCOPED_TRACE(kernel_name + " " + shape.label + " M=" + std::to_string(m) + " N=" + std::to_string(shape.n) +
                   " K=" + std::to_string(shape.k) + " batch=" + std::to_string(shape.batch_count));
      ASSERT_FALSE(entry.unsupported_reason(GemmShape{m, shape.n, shape.k, shape.batch_count}).has_value());
      const auto gemm = session->prepare(m, ++seed);
      const CheckResult result = gemm->check();
      EXPECT_EQ(result.unwritten, 0);
      EXPECT_GT(result.elements_checked, 0);
      EXPECT_LE(result.rel_err, kExpectedError);
      EXPECT_TRUE(result.passed(kThreshold));
      ++tally.checked;
      tally.worst = std::max(tally.worst, result.rel_err);
      if (!result.passed(kExpectedError))
        std::printf("  FAIL %s %s N=%ld K=%ld M=%ld: rel_err %.3e unwritten %ld (%s)\n", kernel_name.c_str(),
                    shape.label.c_str(), long(shape.n), long(shape.k), long(m), result.rel_err, long(result.unwritten),
                    gemm->launch_name().c_str());
    }
  }
}

// Decode and prefill sizes: every small M, the cudagraph list's steps, and edges of the tiles.
inline const std::vector<int64_t> kAllMs = {1, 2, 3, 4, 5, 8, 16, 24, 32, 48, 56, 64, 65, 72, 96, 120,
                                     127, 128, 129, 200, 256, 384, 512, 1024, 4097};
inline const std::vector<int64_t> kEdgeMs = {1, 3, 8, 64, 65, 129, 512, 4097};
inline const std::vector<int64_t> kLargeShapeMs = {1, 64, 300, 1024};

// Both FP8 kernels share one correctness set: DeepSeek-V3 TP8 over every M, Qwen3 TP8 and
// DeepSeek-V3's large TP1 GEMMs over the edges.
inline void check_fp8_kernel(const std::string& kernel_name, Device& device) {
  CheckTally tally;
  check_shapes(kernel_name, device, deepseek_tp8_shapes(), kAllMs, tally);
  check_shapes(kernel_name, device, qwen3_tp8_shapes(), kEdgeMs, tally);
  check_shapes(kernel_name, device, deepseek_tp1_large_shapes(), kLargeShapeMs, tally);
  std::printf("  %s: %d checks, worst rel_err %.3e\n", kernel_name.c_str(), tally.checked, tally.worst);
}

// The FP8 correctness set, then shapes only some kernels accept (`unaligned`: N and K off the tiles and scale
// blocks), tallied apart.
inline void check_fp8_kernel_and_unaligned(const std::string& kernel_name, Device& device,
                                           const std::vector<WeightCase>& unaligned,
                                           const std::vector<int64_t>& unaligned_ms) {
  check_fp8_kernel(kernel_name, device);
  CheckTally tally;
  check_shapes(kernel_name, device, unaligned, unaligned_ms, tally);
  std::printf("  %s unaligned: %d checks, worst rel_err %.3e\n", kernel_name.c_str(), tally.checked, tally.worst);
}

}  // namespace shapescope::kernels
