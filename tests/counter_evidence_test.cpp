// Counter differences between an anomaly M and its reference M as named causes, on
// synthetic counters (no GPU): a hidden reduction kernel, DRAM re-reads, idle SMs, an
// occupancy drop, and nothing beyond the thresholds.
#include "analyze/counter_evidence.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace shapescope::analyze {
namespace {

// A healthy run: one kernel, DRAM bytes 1.05x the minimum, SMs busy 97% of the time.
KernelCounters healthy(int64_t m) {
  KernelCounters counters;
  counters.m = m;
  counters.duration_us = 30;
  counters.min_bytes = 60e6;
  counters.dram_read_bytes = 59e6;
  counters.dram_write_bytes = 4e6;
  counters.l2_hit_rate_pct = 40;
  counters.achieved_occupancy_pct = 12;
  counters.sm_active_pct = 97;
  counters.tensor_pipe_pct = 55;
  counters.instructions = 2e6;
  counters.kernels = {"sm90_xmma_gemm_e4m3_128x128_cluster1x2"};
  return counters;
}

TEST(CounterEvidence, NothingBeyondTheThresholdsSaysWhatWasCompared) {
  KernelCounters here = healthy(240), reference = healthy(144);
  here.dram_read_bytes *= 1.1;  // x1.16 of the minimum vs x1.05: below 1.25
  here.sm_active_pct = 90;      // 7 points more idle: below 10
  here.achieved_occupancy_pct = 10.5;
  const CounterFindings findings = counter_causes(here, reference);
  EXPECT_TRUE(findings.causes.empty());
  EXPECT_EQ(findings.why_not, "counters show no difference beyond the thresholds (1 vs 1 kernel(s), DRAM x1.15 vs "
                              "x1.05 of the minimum, SMs idle 10% vs 3%, occupancy 10.5% vs 12.0%, tensor pipe 55% "
                              "vs 55%)");
}

TEST(CounterEvidence, HiddenReductionKernelIsAnExtraKernel) {
  KernelCounters here = healthy(144), reference = healthy(128);
  here.kernels.push_back("cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>");
  const CounterFindings findings = counter_causes(here, reference);
  ASSERT_EQ(findings.causes.size(), 1u);
  EXPECT_EQ(findings.causes[0].kind, CauseKind::extra_kernel);
  EXPECT_EQ(findings.causes[0].evidence.rfind("split-K reduction (cublasLt::splitKreduce_kernel", 0), 0u)
      << findings.causes[0].evidence;
  EXPECT_NE(findings.causes[0].evidence.find("M=144 launched 2 kernel(s), M=128 1"), std::string::npos);
  // The same kernels in another order are no extra kernel.
  reference.kernels = {here.kernels[1], here.kernels[0]};
  EXPECT_TRUE(counter_causes(here, reference).causes.empty());
}

TEST(CounterEvidence, DramBytesPerMinimumByteRatio) {
  KernelCounters here = healthy(144), reference = healthy(128);
  here.dram_read_bytes = 1.6 * 60e6;  // 1.6x of the minimum + 4 MB written
  here.l2_hit_rate_pct = 22;
  const CounterFindings findings = counter_causes(here, reference);
  ASSERT_EQ(findings.causes.size(), 1u);
  EXPECT_EQ(findings.causes[0].kind, CauseKind::dram_traffic);
  EXPECT_EQ(findings.causes[0].evidence, "DRAM bytes x1.67 of the minimum at M=144 vs x1.05 at M=128 (100.0 vs "
                                         "63.0 MB, L2 hit rate 22% vs 40%): operand re-reads");
  // Bytes that grow with M alone (the minimum grew as much) are no re-read.
  here = healthy(144);
  here.min_bytes *= 2;
  here.dram_read_bytes *= 2;
  here.dram_write_bytes *= 2;
  EXPECT_TRUE(counter_causes(here, reference).causes.empty());
}

TEST(CounterEvidence, IdleSmsAreATail) {
  KernelCounters here = healthy(144), reference = healthy(128);
  here.sm_active_pct = 70;
  const CounterFindings findings = counter_causes(here, reference);
  ASSERT_EQ(findings.causes.size(), 1u);
  EXPECT_EQ(findings.causes[0].kind, CauseKind::idle_sms);
  EXPECT_EQ(findings.causes[0].evidence.rfind("SMs idle 30% of the time at M=144 vs 3% at M=128: tail", 0), 0u)
      << findings.causes[0].evidence;
}

TEST(CounterEvidence, OccupancyDrop) {
  KernelCounters here = healthy(144), reference = healthy(128);
  here.achieved_occupancy_pct = 6;
  const CounterFindings findings = counter_causes(here, reference);
  ASSERT_EQ(findings.causes.size(), 1u);
  EXPECT_EQ(findings.causes[0].kind, CauseKind::occupancy_drop);
  EXPECT_EQ(findings.causes[0].evidence, "achieved occupancy 6.0% at M=144 vs 12.0% at M=128");
}

TEST(CounterEvidence, MissingMetricsAreNotCompared) {
  KernelCounters here = healthy(144), reference = healthy(128);
  here.sm_active_pct = std::nan("");
  here.achieved_occupancy_pct = std::nan("");
  here.min_bytes = 0;
  const CounterFindings findings = counter_causes(here, reference);
  EXPECT_TRUE(findings.causes.empty());
  EXPECT_EQ(findings.why_not.find("idle"), std::string::npos) << findings.why_not;
  EXPECT_EQ(findings.why_not.find("DRAM"), std::string::npos) << findings.why_not;
}

TEST(CounterEvidence, KernelRoles) {
  EXPECT_EQ(kernel_role("void cutlass::Kernel2<cutlass::reduction::kernel::ReduceSplitK<...>>"), "split-K reduction");
  EXPECT_EQ(kernel_role("splitKreduce_kernel"), "split-K reduction");
  EXPECT_EQ(kernel_role("memset"), "memset (workspace or output clear)");
  EXPECT_EQ(kernel_role("sm90_xmma_gemm"), "second kernel");
}

}  // namespace
}  // namespace shapescope::analyze
