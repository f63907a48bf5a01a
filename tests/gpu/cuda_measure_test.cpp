// The measurement core (profiler/measure.hpp) on the CUDA device with real
// cuBLASLt kernels: it converges, and its cold mode really reads from HBM.
#include <gtest/gtest.h>

#include <cstdio>

#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace shapescope {
namespace {

TEST(CudaMeasure, ConvergesOnALargeBlockScaledGemm) {
  const auto device = kernels::open_device();
  if (!device) GTEST_SKIP() << kernels::cuda_unavailable_reason();
  const auto session = kernels::find_kernel("cublaslt_fp8_blockscale").open(*device, {7168, 2304, 1}, 61);
  const auto gemm = session->prepare(4096, 62);
  const profiler::Measurement m = profiler::measure(*device, *gemm, profiler::MeasureOptions{});
  std::printf("  fp8 M=4096 N=7168 K=2304 cold: median %.2f us, ci95 %.3f us, %d samples, clock %.0f -> %.0f MHz\n",
              m.median_us, m.ci95_us, m.samples, m.clock_start ? m.clock_start->sm_clock_mhz : 0.0,
              m.clock_end ? m.clock_end->sm_clock_mhz : 0.0);
  EXPECT_TRUE(m.converged);
  EXPECT_GE(m.samples, profiler::MeasureOptions{}.min_samples);
  EXPECT_LT(m.ci95_us, 0.02 * m.median_us);
  EXPECT_LE(m.min_us, m.median_us);
  EXPECT_GE(m.max_us, m.median_us);
  EXPECT_TRUE(m.clock_start.has_value());
}

// Operands that fit in L2 (16 MB of weights): hot runs read them from the cache, cold
// runs (L2 flushed before each sample) from HBM, so cold must be clearly slower.
TEST(CudaMeasure, FlushMakesACachedGemmSlower) {
  const auto device = kernels::open_device();
  if (!device) GTEST_SKIP() << kernels::cuda_unavailable_reason();
  const auto session = kernels::find_kernel("cublaslt_bf16").open(*device, {4096, 2048, 1}, 71);
  const auto gemm = session->prepare(64, 72);
  profiler::MeasureOptions hot_options;
  hot_options.hot = true;
  const double hot = profiler::measure(*device, *gemm, hot_options).median_us;
  const double cold = profiler::measure(*device, *gemm, profiler::MeasureOptions{}).median_us;
  std::printf("  bf16 M=64 N=4096 K=2048: hot %.2f us, cold %.2f us\n", hot, cold);
  EXPECT_GT(cold, 1.2 * hot);
}

}  // namespace
}  // namespace shapescope
