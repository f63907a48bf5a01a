// Our MXFP8 kernels against the float64 reference: Llama-3.3-70B shapes at TP4, K with a partial 32-block and a
// partial 128-stage, N and M off the 128 tiles and off multiples of 4 (mxfp8_blockscale's scales' 16-byte copies
// fall back to word by word), M from 1 to past a tile; outputs poisoned, fresh seeds. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/reference_check.hpp"

namespace shapescope::kernels {
namespace {

void check_mxfp8(Device& device, const std::string& kernel, const std::vector<WeightCase>& shapes,
                 const std::vector<int64_t>& ms, uint64_t seed) {
  const KernelEntry& entry = find_kernel(kernel);
  CheckTally tally;
  for (const WeightCase& shape : shapes) {
    WeightShape weights{shape.n, shape.k, 1};
    weights.format = BlockFormatId::mxfp8;
    const auto session = entry.open(device, weights, ++seed);
    for (const int64_t m : ms) {
      SCOPED_TRACE(kernel + " " + shape.label + " M=" + std::to_string(m));
      const auto gemm = session->prepare(m, ++seed);
      const CheckResult result = gemm->check();
      EXPECT_EQ(result.unwritten, 0);
      EXPECT_LE(result.rel_err, kExpectedError);
      ++tally.checked;
      tally.worst = std::max(tally.worst, result.rel_err);
    }
  }
  std::printf("  %s: %d checks, worst rel_err %.3e\n", kernel.c_str(), tally.checked, tally.worst);
}

TEST(Mxfp8Kernel, MatchesReferenceOnModelAndUnalignedShapes) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  check_mxfp8(*device, "mxfp8_blockscale",
              {{"llama70b.qkv.tp4", 2560, 8192, 1}, {"llama70b.o.tp4", 8192, 2048, 1}, {"partial_blocks", 200, 336, 1},
               {"odd_rows", 130, 2880, 1}, {"narrow", 8, 16, 1}},
              {1, 3, 4, 127, 129, 300}, 0x3f8000);
}

// Both operands dequantized in the run: K off 16 and off 32 (200: a last 32-block of 8), N odd, M not a
// multiple of anything, up to past a thousand rows.
TEST(Mxfp8Kernel, DequantizedBf16MatchesReferenceOnModelAndUnalignedShapes) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  check_mxfp8(*device, "mxfp8_dequantized_bf16",
              {{"llama70b.qkv.tp4", 2560, 8192, 1}, {"llama70b.down.tp4", 8192, 7168, 1},
               {"partial_blocks", 201, 336, 1}, {"k_off_16", 131, 200, 1}, {"narrow", 7, 8, 1}},
              {1, 7, 130, 1029}, 0x3f8d00);
}

// The same prepared GEMM run many times (the weights' bf16 scratch rewritten each run) keeps its answer, and the
// launch name says which path ran.
TEST(Mxfp8Kernel, DequantizedBf16StaysExactOverRepeatedRuns) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const KernelEntry& entry = find_kernel("mxfp8_dequantized_bf16");
  WeightShape weights{1000, 1024, 1};
  weights.format = BlockFormatId::mxfp8;
  const auto session = entry.open(*device, weights, 0x3f8e00);
  const auto gemm = session->prepare(333, 0x3f8e01);
  for (int i = 0; i < 5; ++i) gemm->run();
  const CheckResult result = gemm->check();
  EXPECT_EQ(result.unwritten, 0);
  EXPECT_LE(result.rel_err, kExpectedError);
  EXPECT_NE(gemm->launch_name().find("mxfp8_dequantized_bf16/dequantize_bf16+cublaslt_"), std::string::npos)
      << gemm->launch_name();
  const std::string config = entry.describe_config(GemmShape{333, 1000, 1024, 1});
  EXPECT_EQ(config.rfind("dequantize to bf16, then cublasLt algo=", 0), 0u) << config;
}

}  // namespace
}  // namespace shapescope::kernels
