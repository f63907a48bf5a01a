// CPU kernels against the float64 reference, on fresh random seeds and shapes
// whose K and N are not multiples of 128 (partial last blocks).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kernels/kernel.hpp"
#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels {
namespace {

struct Case {
  const char* kernel;
  GemmShape shape;
};

class CpuKernelTest : public ::testing::TestWithParam<Case> {};

TEST_P(CpuKernelTest, MatchesFloat64Reference) {
  register_cpu_kernels();
  const Case& c = GetParam();
  std::random_device entropy;
  const uint64_t weight_seed = (uint64_t(entropy()) << 32) | entropy();
  const uint64_t activation_seed = (uint64_t(entropy()) << 32) | entropy();
  auto device = make_cpu_device(2);
  const KernelEntry& entry = find_kernel(c.kernel);
  ASSERT_FALSE(entry.unsupported_reason(c.shape).has_value());
  auto session = entry.open(*device, {c.shape.n, c.shape.k, c.shape.batch_count}, weight_seed);
  auto gemm = session->prepare(c.shape.m, activation_seed);
  const CheckResult result = gemm->check();
  SCOPED_TRACE(testing::Message() << c.kernel << " seeds " << weight_seed << "," << activation_seed);
  EXPECT_EQ(result.unwritten, 0);
  const int64_t outputs = c.shape.m * c.shape.n * c.shape.batch_count;
  EXPECT_GE(result.elements_checked, std::min<int64_t>(outputs, 1000));
  EXPECT_LE(result.elements_checked, outputs);
  // fp32 accumulation then one bf16 rounding: well below the 1e-2 threshold.
  EXPECT_LT(result.rel_err, 4e-3);
  EXPECT_TRUE(result.passed(1e-2));
  EXPECT_GT(gemm->min_bytes(), 0);
  EXPECT_NE(gemm->launch_name().find(c.kernel), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    PartialBlocks, CpuKernelTest,
    ::testing::Values(Case{"cpu_fp8_blockscale", {1, 200, 300, 1}}, Case{"cpu_fp8_blockscale", {17, 129, 257, 1}},
                      Case{"cpu_fp8_blockscale", {9, 200, 130, 3}}, Case{"cpu_a16w8_blockscale", {1, 200, 300, 1}},
                      Case{"cpu_a16w8_blockscale", {33, 131, 385, 2}}, Case{"cpu_bf16", {1, 200, 300, 1}},
                      Case{"cpu_bf16", {20, 257, 140, 2}},
                      // M beyond one row panel (kRowPanel), the last panel partial.
                      Case{"cpu_fp8_blockscale", {300, 129, 257, 2}}, Case{"cpu_a16w8_blockscale", {513, 131, 130, 1}},
                      Case{"cpu_bf16", {260, 200, 140, 2}}),
    [](const auto& info) {
      const Case& c = info.param;
      return std::string(c.kernel) + "_M" + std::to_string(c.shape.m) + "_N" + std::to_string(c.shape.n) + "_K" +
             std::to_string(c.shape.k) + "_B" + std::to_string(c.shape.batch_count);
    });

TEST(CpuDevice, ReportsTheCpuAndTimesRuns) {
  auto device = make_cpu_device(2);
  EXPECT_EQ(device->kind(), BackendKind::cpu);
  const DeviceInfo info = device->info();
  EXPECT_EQ(info.backend, "cpu");
  EXPECT_EQ(info.multiprocessors, 2);
  EXPECT_GT(info.l2_bytes, 0u);
  EXPECT_GT(device->free_memory_bytes(), 0u);
  EXPECT_FALSE(device->sample_clock().has_value());
  auto timer = device->make_timer();
  timer->start();
  device->flush_cache();
  timer->stop();
  EXPECT_GT(timer->elapsed_us(), 0);
}

TEST(KernelRegistry, CpuKernelsRegisterOnceAndUnknownNamesListTheValidOnes) {
  register_cpu_kernels();
  const size_t count = kernel_registry().size();
  register_cpu_kernels();
  EXPECT_EQ(kernel_registry().size(), count);
  EXPECT_EQ(find_kernel("cpu_bf16").backend, BackendKind::cpu);
  try {
    find_kernel("cpu_int3");
    FAIL() << "expected UserError";
  } catch (const std::exception& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("cpu_int3"), std::string::npos);
    EXPECT_NE(message.find("cpu_fp8_blockscale"), std::string::npos);
    EXPECT_NE(message.find("cpu_a16w8_blockscale"), std::string::npos);
  }
}

}  // namespace
}  // namespace shapescope::kernels
