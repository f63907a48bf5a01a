// mxfp8_blockscale against the float64 reference: Llama-3.3-70B shapes at TP4, K with a partial 32-block and a
// partial 128-stage, N and M off the 128 tiles and off multiples of 4 (the scales' 16-byte copies fall back to
// word by word), M from 1 to past a tile; outputs poisoned, fresh seeds. Skips without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "kernels/kernel.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/reference_check.hpp"

namespace shapescope::kernels {
namespace {

TEST(Mxfp8Kernel, MatchesReferenceOnModelAndUnalignedShapes) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const KernelEntry& entry = find_kernel("mxfp8_blockscale");
  const std::vector<WeightCase> shapes = {{"llama70b.qkv.tp4", 2560, 8192, 1}, {"llama70b.o.tp4", 8192, 2048, 1},
                                          {"partial_blocks", 200, 336, 1},     {"odd_rows", 130, 2880, 1},
                                          {"narrow", 8, 16, 1}};
  CheckTally tally;
  uint64_t seed = 0x3f8000;
  for (const WeightCase& shape : shapes) {
    WeightShape weights{shape.n, shape.k, 1};
    weights.format = BlockFormatId::mxfp8;
    const auto session = entry.open(*device, weights, ++seed);
    for (const int64_t m : {1, 3, 4, 127, 129, 300}) {
      SCOPED_TRACE(shape.label + " M=" + std::to_string(m));
      const auto gemm = session->prepare(m, ++seed);
      const CheckResult result = gemm->check();
      EXPECT_EQ(result.unwritten, 0);
      EXPECT_LE(result.rel_err, kExpectedError);
      ++tally.checked;
      tally.worst = std::max(tally.worst, result.rel_err);
    }
  }
  std::printf("  mxfp8_blockscale: %d checks, worst rel_err %.3e\n", tally.checked, tally.worst);
}

}  // namespace
}  // namespace shapescope::kernels
