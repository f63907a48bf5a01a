// The CPU kernels of the block-scaled formats (cpu_a16w4_blockscale in each FP4 layout, cpu_mxfp8_blockscale,
// cpu_a16w4_blockscale_grouped) against the float64 reference on fresh seeds, with partial last K blocks and
// N not a multiple of 128.
#include <gtest/gtest.h>

#include <random>

#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/grouped_reference.hpp"
#include "kernels/kernel.hpp"
#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels {
namespace {

uint64_t fresh_seed() {
  std::random_device entropy;
  return (uint64_t(entropy()) << 32) | entropy();
}

struct Case {
  const char* kernel;
  BlockFormatId format;
  GemmShape shape;
};

class CpuBlockScaledKernel : public ::testing::TestWithParam<Case> {};

TEST_P(CpuBlockScaledKernel, MatchesTheFloat64Reference) {
  register_cpu_kernels();
  const Case& c = GetParam();
  const uint64_t weight_seed = fresh_seed(), activation_seed = fresh_seed();
  SCOPED_TRACE(testing::Message() << c.kernel << " seeds " << weight_seed << "," << activation_seed);
  auto device = make_cpu_device(2);
  const KernelEntry& entry = find_kernel(c.kernel);
  ASSERT_FALSE(entry.unsupported_reason(c.shape).has_value());
  auto session = entry.open(*device, {c.shape.n, c.shape.k, c.shape.batch_count, c.format}, weight_seed);
  auto gemm = session->prepare(c.shape.m, activation_seed);
  const CheckResult result = gemm->check();
  EXPECT_EQ(result.unwritten, 0);
  EXPECT_LT(result.rel_err, 4e-3);  // fp32 accumulation and one bf16 rounding
  EXPECT_GE(result.elements_checked, std::min<int64_t>(c.shape.m * c.shape.n * c.shape.batch_count, 1000));
  EXPECT_NE(gemm->launch_name().find(std::string(to_string(c.format))), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    PartialBlocks, CpuBlockScaledKernel,
    ::testing::Values(Case{"cpu_a16w4_blockscale", BlockFormatId::nvfp4, {1, 200, 296, 1}},
                      Case{"cpu_a16w4_blockscale", BlockFormatId::nvfp4, {17, 129, 150, 2}},
                      Case{"cpu_a16w4_blockscale", BlockFormatId::mxfp4, {5, 131, 200, 1}},
                      Case{"cpu_a16w4_blockscale", BlockFormatId::e2m1_e8m0_16, {9, 140, 322, 1}},
                      Case{"cpu_mxfp8_blockscale", BlockFormatId::mxfp8, {3, 200, 301, 1}},
                      Case{"cpu_mxfp8_blockscale", BlockFormatId::mxfp8, {20, 129, 96, 2}},
                      // M beyond one row panel (kRowPanel), the last panel partial.
                      Case{"cpu_a16w4_blockscale", BlockFormatId::nvfp4, {300, 129, 150, 2}},
                      Case{"cpu_mxfp8_blockscale", BlockFormatId::mxfp8, {260, 131, 96, 1}}),
    [](const auto& info) {
      const Case& c = info.param;
      return std::string(c.kernel) + "_" + std::string(to_string(c.format)) + "_M" + std::to_string(c.shape.m) +
             "_N" + std::to_string(c.shape.n) + "_K" + std::to_string(c.shape.k) + "_B" +
             std::to_string(c.shape.batch_count);
    });

TEST(CpuBlockScaledKernel, Fp4KernelsRefuseAnOddK) {
  register_cpu_kernels();
  const std::optional<std::string> reason = find_kernel("cpu_a16w4_blockscale").unsupported_reason({4, 128, 301, 1});
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("K=301"), std::string::npos) << *reason;
  EXPECT_TRUE(find_grouped_kernel("cpu_a16w4_blockscale_grouped").unsupported_reason(GroupedShape{64, 7, {1}}));
}

TEST(CpuBlockScaledKernel, TheA16w4KernelsTakeEveryFp4FormatNvfp4First) {
  register_cpu_kernels();
  const std::vector<BlockFormatId> fp4 = {BlockFormatId::nvfp4, BlockFormatId::mxfp4, BlockFormatId::e2m1_e8m0_16};
  EXPECT_EQ(find_kernel("cpu_a16w4_blockscale").formats_taken, fp4);
  EXPECT_EQ(find_grouped_kernel("cpu_a16w4_blockscale_grouped").formats_taken, fp4);
  EXPECT_EQ(find_kernel("cpu_a16w4_blockscale").dtype, "bf16");  // W4A16: bf16 math
  EXPECT_EQ(find_kernel("cpu_mxfp8_blockscale").dtype, "fp8");
}

TEST(CpuBlockScaledKernel, GroupedMatchesTheReferenceInBothLayouts) {
  register_cpu_kernels();
  auto device = make_cpu_device(2);
  const GroupedKernelEntry& entry = find_grouped_kernel("cpu_a16w4_blockscale_grouped");
  for (const BlockFormatId format : {BlockFormatId::mxfp4, BlockFormatId::nvfp4}) {
    const uint64_t weight_seed = fresh_seed();
    SCOPED_TRACE(testing::Message() << to_string(format) << " seed " << weight_seed);
    auto session = entry.open(*device, {4, 136, 200, format}, weight_seed);
    GroupedShape contiguous{136, 200, {5, 0, 1, 33}, GroupLayout::contiguous, 16, 0};
    GroupedShape masked{136, 200, {5, 0, 1, 33}, GroupLayout::masked, 1, 40};
    for (const GroupedShape& shape : {contiguous, masked}) {
      auto gemm = session->prepare(shape, fresh_seed());
      const CheckResult result = gemm->check();
      EXPECT_EQ(result.unwritten, 0);
      EXPECT_LT(result.rel_err, 4e-3);
      EXPECT_EQ(gemm->executed_rows(), shape.useful_rows());
      EXPECT_DOUBLE_EQ(gemm->min_bytes(), grouped_min_bytes(shape, a16w4_operands(format)));
    }
  }
}

}  // namespace
}  // namespace shapescope::kernels
