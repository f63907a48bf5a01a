// `profile --verify-plans` on the GPU: a hand-made report with one split plan is
// run for real; the output is what analyze reads back (common/verify_results.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/verify_results.hpp"
#include "kernels/cuda/gemm_group.hpp"
#include "profiler/verify_plans.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope {
namespace {

TEST(CudaVerifyPlans, MeasuresAPlanAndWritesWhatAnalyzeReads) {
  kernels::register_cuda_kernels();
  const auto device = kernels::make_cuda_device();
  if (!device) GTEST_SKIP() << kernels::cuda_unavailable_reason();
  const testing_support::ScratchDir scratch;
  const std::filesystem::path& dir = scratch.path();
  const nlohmann::json report = {
      {"series",
       {{{"name", "deepseek_v3_fused_qkv_a_proj_tp8"},
         {"kernel", "cublaslt_bf16"},
         {"n", 2112},
         {"k", 7168},
         {"anomalies",
          {{{"m", 1000},
            {"time_us", 40.0},
            {"best_plan", {{"kind", "study_pair"}, {"parts", {512, 488}}, {"predicted_us", 30.0}, {"gain_pct", 25.0}}}}}}}}}};
  std::ofstream(dir / "report.json") << report.dump();
  profiler::VerifyRequest request;
  request.report_path = (dir / "report.json").string();
  const VerifyResults results = profiler::verify_plans(*device, request);
  ASSERT_EQ(results.plans.size(), 1u);
  const VerifiedPlan& plan = results.plans[0];
  std::printf("  M=1000 -> 512+488: monolithic %.2f us, predicted %.2f, serial %.2f, two streams %.2f: %s\n",
              plan.monolithic_us, plan.predicted_us, plan.measured_serial_us, plan.measured_two_streams_us,
              plan.verdict.c_str());
  EXPECT_GT(plan.monolithic_us, 0);
  EXPECT_GT(plan.measured_two_streams_us, 0);
  // Serial parts cost at least most of the parts' summed time (the same kernels, one after another).
  EXPECT_GT(plan.measured_serial_us, 0.5 * plan.predicted_us);

  const VerifyResults reread = read_verify_results(profiler::default_verify_output(request.report_path));
  ASSERT_EQ(reread.plans.size(), 1u);
  EXPECT_EQ(reread.plans[0].verdict, plan.verdict);
  EXPECT_EQ(reread.plans[0].parts, (std::vector<int64_t>{512, 488}));
  EXPECT_DOUBLE_EQ(reread.plans[0].monolithic_us, plan.monolithic_us);
}

// Parts spread over two streams still each compute their own correct output.
TEST(CudaVerifyPlans, TwoStreamGroupKeepsEveryPartCorrect) {
  kernels::register_cuda_kernels();
  const auto device = kernels::make_cuda_device();
  if (!device) GTEST_SKIP() << kernels::cuda_unavailable_reason();
  const auto session = kernels::find_kernel("cublaslt_fp8_blockscale").open(*device, {7168, 2304, 1}, 81);
  const auto first = session->prepare(256, 82), second = session->prepare(132, 83), third = session->prepare(64, 84);
  kernels::cuda::GemmGroup group(*device, {first.get(), second.get(), third.get()},
                                 kernels::cuda::GroupLaunch::two_streams);
  device->capture(std::vector<kernels::PreparedGemm*>(5, &group))->replay_us();  // captured into a graph too
  const kernels::CheckResult result = group.check();
  EXPECT_TRUE(result.passed(1e-2)) << result.rel_err;
  EXPECT_EQ(result.elements_checked, first->check().elements_checked + second->check().elements_checked +
                                         third->check().elements_checked);
}

}  // namespace
}  // namespace shapescope
