// The CUPTI range-profiler collector on real kernels: the values are physically plausible
// (a cold GEMM reads at least its weights from DRAM, its duration is near the timed one),
// and a machine that refuses counters skips with CUPTI's one line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>

#include "common/kernel_counters.hpp"
#include "kernels/kernel.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace shapescope {
namespace {

TEST(CudaCounters, ColdBlockScaledGemmReadsItsWeightsFromDram) {
  const auto device = kernels::open_device();
  if (!device) GTEST_SKIP() << kernels::cuda_unavailable_reason();
  std::unique_ptr<kernels::CounterSession> counters;
  try {
    counters = device->counters();
  } catch (const std::exception& refused) {
    GTEST_SKIP() << refused.what();  // no libcupti, or counters not permitted here
  }
  ASSERT_TRUE(counters);
  // llama3_8b gate_up TP2: 58.7 MB of e4m3 weights, more than the 50 MB L2.
  const auto session = kernels::find_kernel("cublaslt_fp8_blockscale").open(*device, {14336, 4096, 1}, 81);
  const auto gemm = session->prepare(144, 82);
  for (int repeat = 0; repeat < 2; ++repeat) {  // the second collect reuses the enabled profiler
    device->flush_cache();
    device->synchronize();
    const KernelCounters c = counters->collect(*gemm);
    std::printf("  M=144: %.2f us, DRAM %.1f MB read %.1f MB written (minimum %.1f MB), L2 hit %.1f%%, occupancy "
                "%.1f%%, SMs active %.1f%%, tensor pipe %.1f%%, %.3g instructions, %zu metric(s) missing\n",
                c.duration_us, c.dram_read_bytes / 1e6, c.dram_write_bytes / 1e6, gemm->min_bytes() / 1e6,
                c.l2_hit_rate_pct, c.achieved_occupancy_pct, c.sm_active_pct, c.tensor_pipe_pct, c.instructions,
                c.missing.size());
    for (const std::string& name : c.missing) std::printf("    missing: %s\n", name.c_str());
    EXPECT_GT(c.duration_us, 1.0);
    EXPECT_LT(c.duration_us, 1000.0);
    EXPECT_GT(c.dram_read_bytes, 0.8 * 14336.0 * 4096.0);  // the weights, once
    EXPECT_GT(c.instructions, 0);
    if (std::isfinite(c.sm_active_pct)) {
      EXPECT_LE(c.sm_active_pct, 100.5);
    }
    if (std::isfinite(c.l2_hit_rate_pct)) {
      EXPECT_LE(c.l2_hit_rate_pct, 100.5);
    }
  }
}

}  // namespace
}  // namespace shapescope
