// fp8_blockscale's swap-AB decode kernel (kernels/cuda/fp8_blockscale_swapab_kernel.cuh) against the float64
// reference (tests/gpu/reference_check.hpp), both weight orders: every token width at unaligned M, N off the
// 128-row weight tile, K with a partial last block, every cluster split of K the heuristic picks on this GPU
// and every forced one, programmatic dependent launch on and off, and a CUDA graph of back-to-back launches.
// Outputs poisoned before every run, fresh seeds per check; skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "kernels/cuda/fp8_blockscale_swapab_config.hpp"
#include "kernels/kernel.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/reference_check.hpp"

namespace shapescope::kernels {
namespace {

const std::vector<int64_t> kDecodeMs = {1, 3, 7, 8, 17, 33, 64};
const char* const kKernels[] = {"fp8_blockscale", "fp8_blockscale_bpreshuffle"};

// One prepared GEMM checked on poisoned output, then after a graph of 16 launches; its name must say swap-AB
// with `splits` K ranges (0: any). Returns that name.
std::string check_swap_ab(Device& device, GemmSession& session, int64_t m, uint64_t seed, int splits, int& checks,
                   double& worst) {
  const auto gemm = session.prepare(m, seed);
  const std::string name = gemm->launch_name();
  SCOPED_TRACE("M=" + std::to_string(m) + " " + name);
  EXPECT_NE(name.find("/swapab_"), std::string::npos);
  if (splits > 0) {
    EXPECT_NE(name.find("_splitk" + std::to_string(splits) + "_"), std::string::npos);
  }
  const CheckResult first = gemm->check();
  EXPECT_EQ(first.unwritten, 0);
  EXPECT_GT(first.elements_checked, 0);
  EXPECT_LE(first.rel_err, kExpectedError);
  EXPECT_GT(device.capture(std::vector<PreparedGemm*>(16, gemm.get()))->replay_us(), 0.0);
  const CheckResult after_graph = gemm->check();
  EXPECT_EQ(after_graph.unwritten, 0) << "after the graph of 16 launches";
  EXPECT_LE(after_graph.rel_err, kExpectedError) << "after the graph of 16 launches";
  worst = std::max({worst, first.rel_err, after_graph.rel_err});
  checks += 2;
  return name;
}

// Every token width and both weight tile heights (swap-AB forced at every M it runs, up to 64, with 64 and
// 128 weight rows per CTA) on DeepSeek-V3 TP8's dense modules and
// shapes off every tile (N=1000 not a multiple of 128, K=1040 with a partial last K block, a single weight
// tile), PDL on and off; then the heuristic's own choices, which take swap-AB at M <= 32 where N fills
// enough SMs.
TEST(Fp8SwapAb, EveryTokenWidthMatchesReferenceAtDecode) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  std::vector<WeightCase> shapes = deepseek_tp8_shapes();
  shapes.push_back({"unaligned", 1000, 1040, 1});
  shapes.push_back({"one_tile", 72, 400, 1});
  int checks = 0;
  double worst = 0;
  uint64_t seed = 0x5a4ab;
  for (const bool programmatic : {false, true}) {
    device->set_programmatic_launch(programmatic);
    for (const char* kernel : kKernels) {
      for (const WeightCase& shape : shapes) {
        SCOPED_TRACE(std::string(kernel) + " " + shape.label + " N=" + std::to_string(shape.n) +
                     " K=" + std::to_string(shape.k) + (programmatic ? " +pdl" : ""));
        const auto session = find_kernel(kernel).open(*device, WeightShape{shape.n, shape.k, 1}, ++seed);
        for (const char* rows : {"64", "128"}) {
          ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_AB", "1", 1), 0);
          ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_ROWS", rows, 1), 0);
          for (const int64_t m : kDecodeMs) check_swap_ab(*device, *session, m, ++seed, 0, checks, worst);
          ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_ROWS"), 0);
          ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_AB"), 0);
        }
      }
    }
  }
  device->set_programmatic_launch(false);
  std::printf("  swap-AB, every token width: %d checks, worst rel_err %.3e\n", checks, worst);
}

TEST(Fp8SwapAb, HeuristicChoicesMatchReference) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  device->set_programmatic_launch(true);
  CheckTally tally;
  check_shapes("fp8_blockscale", *device, deepseek_tp8_shapes(), kDecodeMs, tally);
  const auto session = find_kernel("fp8_blockscale").open(*device, WeightShape{4608, 7168, 1}, 0x5a4);
  for (const int64_t m : kDecodeMs) {
    const std::string name = session->prepare(m, 0x5a5 + uint64_t(m))->launch_name();
    EXPECT_EQ(name.find("/swapab_") != std::string::npos, m <= cuda::kFp8SwapAbLargestM) << name;
  }
  device->set_programmatic_launch(false);
  std::printf("  heuristic at decode: %d checks, worst rel_err %.3e\n", tally.checked, tally.worst);
}

// The K splits the heuristic picks: shapes whose choice on the reference H100 spec is a cluster of 2, 3, 4
// and 6 CTAs (with 64 and 128 weight rows), at every token width; the name says what ran on this GPU.
TEST(Fp8SwapAb, HeuristicClusterSplitsMatchReference) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const std::vector<WeightCase> shapes = {
      {"split2", 3072, 7168, 1}, {"gate_up", 4608, 7168, 1}, {"qkv_a", 2112, 7168, 1},
      {"split4", 1536, 4096, 1}, {"split6", 1024, 7168, 1},
  };
  for (const WeightCase& shape : shapes)
    EXPECT_GT(cuda::choose_fp8_swapab_config(GemmShape{8, shape.n, shape.k, 1}, cuda::fp8_reference_spec())->splits, 1)
        << shape.label << ": the reference spec's choice splits K";
  int checks = 0;
  double worst = 0;
  uint64_t seed = 0x5c1;
  std::set<std::string> splits_seen;
  for (const bool programmatic : {false, true}) {
    device->set_programmatic_launch(programmatic);
    for (const char* kernel : kKernels)
      for (const WeightCase& shape : shapes) {
        SCOPED_TRACE(std::string(kernel) + " " + shape.label + (programmatic ? " +pdl" : ""));
        const auto session = find_kernel(kernel).open(*device, WeightShape{shape.n, shape.k, 1}, ++seed);
        for (const int64_t m : {1, 3, 8, 17, 32}) {
          const std::string name = check_swap_ab(*device, *session, m, ++seed, 0, checks, worst);
          splits_seen.insert(name.substr(name.find("_splitk") + 1, name.find("_grid") - name.find("_splitk") - 1));
        }
      }
  }
  device->set_programmatic_launch(false);
  std::string seen;
  for (const std::string& splits : splits_seen) seen += " " + splits;
  std::printf("  swap-AB, the heuristic's cluster splits: %d checks, worst rel_err %.3e, ran%s\n", checks, worst,
              seen.c_str());
}

// Every split of K (1 to kFp8SwapAbMaxSplits ranges, forced: clusters of 1 to 8 CTAs), on a deep narrow
// shape and on the unaligned one (9 K blocks, the last partial: ranges of unequal length), with 64 weight
// rows per CTA (M=1, 64) and 128 (M=17); row-major weights with PDL on and off, pre-shuffled with it on.
TEST(Fp8SwapAb, EverySplitOfKMatchesReference) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  struct Case {
    WeightShape weights;
    int splits;  // as forced; the name shows the ranges equal lengths give
  };
  std::vector<Case> cases;
  for (int splits = 1; splits <= cuda::kFp8SwapAbMaxSplits; ++splits) {
    cases.push_back({{512, 7168, 1}, splits});
    cases.push_back({{1000, 1040, 1}, splits});
  }
  int checks = 0;
  double worst = 0;
  uint64_t seed = 0x5917;
  for (const char* kernel : kKernels) {
    for (const Case& c : cases) {
      const bool programmatic = kernel == std::string("fp8_blockscale_bpreshuffle") || c.splits % 2 == 0;
      device->set_programmatic_launch(programmatic);
      SCOPED_TRACE(std::string(kernel) + " N=" + std::to_string(c.weights.n) + " K=" + std::to_string(c.weights.k) +
                   " splits=" + std::to_string(c.splits) + (programmatic ? " +pdl" : ""));
      const auto session = find_kernel(kernel).open(*device, c.weights, ++seed);
      const int64_t kblocks = (c.weights.k + 127) / 128;
      const int64_t per_range = (kblocks + c.splits - 1) / c.splits;
      const int ranges = int((kblocks + per_range - 1) / per_range);
      for (const int64_t m : {int64_t(1), int64_t(17), int64_t(64)}) {
        ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_AB", "1", 1), 0);
        ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_ROWS", m == 17 ? "128" : "64", 1), 0);
        ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_SPLITS", std::to_string(c.splits).c_str(), 1), 0);
        check_swap_ab(*device, *session, m, ++seed, ranges, checks, worst);
        ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_SPLITS"), 0);
        ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_ROWS"), 0);
        ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_AB"), 0);
      }
    }
  }
  device->set_programmatic_launch(false);
  std::printf("  swap-AB, forced splits: %d checks, worst rel_err %.3e\n", checks, worst);
}

}  // namespace
}  // namespace shapescope::kernels
