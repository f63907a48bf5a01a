// A kernel registered with profiled_by_default = false (portable_fp8_blockscale: a slow
// correctness baseline) joins a sweep only when named with --kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "kernels/kernel.hpp"
#include "profiler/sweep_setup.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope::profiler {
namespace {

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(DefaultKernels, AKernelNotProfiledByDefaultRunsOnlyWhenNamed) {
  register_all_kernels();
  kernels::KernelEntry opt_in = kernels::find_kernel("cpu_bf16");
  opt_in.name = "cpu_bf16_opt_in_test";
  opt_in.profiled_by_default = false;
  kernels::register_kernel(opt_in);

  const testing_support::ScratchDir scratch;
  const std::filesystem::path out = scratch.path() / "out";
  ProfileRequest request;
  request.model = "qwen3_4b";
  request.module = "o_proj";
  request.tp = 8;
  request.backend = "cpu";
  request.threads = 1;
  request.m_sweep.lists = {"1"};
  request.out = out.string();

  const SweepSetup every = prepare_sweep(request);
  EXPECT_TRUE(has(every.plan.kernels, "cpu_bf16"));
  EXPECT_FALSE(has(every.plan.kernels, "cpu_bf16_opt_in_test"));

  request.kernels = {"cpu_bf16_opt_in_test"};
  const SweepSetup named = prepare_sweep(request);
  EXPECT_EQ(named.plan.kernels, std::vector<std::string>{"cpu_bf16_opt_in_test"});
}

}  // namespace
}  // namespace shapescope::profiler
