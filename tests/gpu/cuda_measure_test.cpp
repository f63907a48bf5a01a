// The measurement core (profiler/measure.hpp) on the CUDA device with real
// cuBLASLt kernels: it converges, and its cold mode really reads from HBM.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <vector>

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

// Graph timing rotating over enough weight copies to leave the L2 reads nothing cached:
// slower than hot (the same weights every launch), cheaper than a lone cold launch
// (no launch gap), and every copy computes the right product.
TEST(CudaMeasure, GraphRotationSitsBetweenHotAndColdLaunches) {
  const auto device = kernels::open_device();
  if (!device) GTEST_SKIP() << kernels::cuda_unavailable_reason();
  const kernels::KernelEntry& kernel = kernels::find_kernel("fp8_blockscale");
  const kernels::WeightShape shape{4096, 2048, 1};  // 8 MB of weights
  const int sets = int((2 * device->info().l2_bytes) / (8u << 20)) + 1;
  std::vector<std::unique_ptr<kernels::GemmSession>> sessions;
  std::vector<std::unique_ptr<kernels::PreparedGemm>> gemms;
  std::vector<kernels::PreparedGemm*> runs;
  for (int i = 0; i < sets; ++i) {
    sessions.push_back(kernel.open(*device, shape, 100 + i));
    gemms.push_back(sessions.back()->prepare(16, 200 + i));
    runs.push_back(gemms.back().get());
  }
  profiler::MeasureOptions graph_options, hot_options, events_options;
  graph_options.timing = kernels::TimingMode::graph;
  hot_options.timing = kernels::TimingMode::graph;
  hot_options.hot = true;
  const profiler::Measurement graph = profiler::measure(*device, runs, graph_options);
  const double hot = profiler::measure(*device, runs, hot_options).median_us;
  const double events = profiler::measure(*device, runs, events_options).median_us;
  std::printf("  fp8_blockscale M=16 N=4096 K=2048 over %d sets: hot %.2f us, graph %.2f us, events %.2f us\n",
              graph.operand_sets, hot, graph.median_us, events);
  EXPECT_EQ(graph.operand_sets, sets);
  EXPECT_GT(graph.median_us, 1.1 * hot);
  EXPECT_LT(graph.median_us, events);
  for (kernels::PreparedGemm* run : runs) EXPECT_TRUE(run->check().passed(1e-2));
}

}  // namespace
}  // namespace shapescope
