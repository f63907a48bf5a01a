// Runs the built `profile` binary: user errors are one line on stderr and exit 2,
// and a tiny sweep writes a CSV the study's layout reads.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/csv.hpp"
#include "tests/profile_cli_support.hpp"

namespace {

namespace fs = std::filesystem;

using shapescope::testing_support::expect_user_error;
using shapescope::testing_support::Outcome;
using shapescope::testing_support::run_profile;

class ProfileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!shapescope::testing_support::profile_binary_built()) GTEST_SKIP() << "profile binary not built";
  }
};

TEST_F(ProfileCli, UnknownModelListsTheValidOnes) {
  expect_user_error("--model llama9 --backend cpu", {"llama9", "llama3_8b", "deepseek_v3"});
}

TEST_F(ProfileCli, UnknownModuleListsTheLayers) {
  expect_user_error("--model llama3_8b --module mlp --backend cpu", {"mlp", "gate_up_proj", "down_proj"});
}

TEST_F(ProfileCli, TpThatDoesNotDivideNamesTheLayer) {
  expect_user_error("--model llama3_8b --tp 3 --backend cpu", {"tp=3", "K=4096"});
}

TEST_F(ProfileCli, ScaleBlockCutSuggestsExpertParallelismOrAllow) {
  expect_user_error("--model qwen3_235b_a22b --tp 8 --backend cpu --kernel cpu_fp8_blockscale",
                    {"128x128", "expert parallelism", "--cut-scale-block allow"});
}

TEST_F(ProfileCli, BadSweepAndKernelAndFolder) {
  expect_user_error("--model llama3_8b --backend cpu --m-range 10:1:1", {"START:STOP:STEP"});
  expect_user_error("--model llama3_8b --backend cpu --kernel cpu_int3", {"cpu_int3", "cpu_bf16"});
  expect_user_error("--model llama3_8b --backend cpu --out /proc/shapescope_no", {"/proc/shapescope_no", "--out"});
  expect_user_error("--model llama3_8b --backend tpu", {"tpu", "auto, cpu, cuda"});
  expect_user_error("--model llama3_8b --no-such-flag", {"--no-such-flag"});
}

TEST_F(ProfileCli, ConfigWhoseSizesOverflowIsRefusedBeforeAllocation) {
  const fs::path config = fs::temp_directory_path() / ("shapescope_big_config_" + std::to_string(::getpid()) + ".json");
  std::ofstream(config) << R"({"model_type": "llama", "hidden_size": 4294967296, "intermediate_size": 4294967296,
                                "num_attention_heads": 32, "num_key_value_heads": 8})";
  expect_user_error("--hf-config " + config.string() + " --model big --backend cpu --m-list 1 --peak-tflops 1 --out " +
                        (fs::temp_directory_path() / "shapescope_big_out").string(),
                    {"big qkv_proj", "4294967296"});
  fs::remove(config);
  fs::remove_all(fs::temp_directory_path() / "shapescope_big_out");
}

TEST_F(ProfileCli, ListKernelsShowsFormatsAndConfigs) {
  const Outcome outcome = run_profile("--list-kernels");
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_NE(outcome.stdout_text.find("cpu_fp8_blockscale"), std::string::npos);
  EXPECT_NE(outcome.stdout_text.find("B e4m3 128x128"), std::string::npos);
  EXPECT_NE(outcome.stdout_text.find("config:"), std::string::npos);
}

TEST_F(ProfileCli, TinySweepWritesAStudyReadableCsvAndResumes) {
  const fs::path out = fs::temp_directory_path() / ("shapescope_cli_out_" + std::to_string(::getpid()));
  fs::remove_all(out);
  const std::string arguments = "--model qwen3_4b --module o_proj --tp 8 --backend cpu --threads 2 --kernel cpu_bf16 "
                                "--m-list 1,3 --min-samples 2 --warmup 0 --max-seconds-per-point 0 --out " +
                                out.string();
  const Outcome first = run_profile(arguments);
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  EXPECT_NE(first.stderr_text.find("backend cpu"), std::string::npos);
  EXPECT_NE(first.stdout_text.find("best MFU"), std::string::npos);
  std::vector<fs::path> csvs;
  for (const auto& entry : fs::directory_iterator(out))
    if (entry.path().extension() == ".csv") csvs.push_back(entry.path());
  ASSERT_EQ(csvs.size(), 1u);
  const shapescope::csv::Table table = shapescope::csv::read_file(csvs[0]);
  ASSERT_GE(table.header.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(table.header.begin(), table.header.begin() + 5),
            (std::vector<std::string>{"batch", "kernel_time", "flops", "utils", "kernel_name"}));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0][0], "1");
  EXPECT_EQ(table.rows[1][0], "3");
  EXPECT_EQ(table.rows[0][table.column("status")], "ok");
  EXPECT_GT(std::stod(table.rows[0][1]), 0.0);
  fs::path sidecar = csvs[0];
  EXPECT_TRUE(fs::exists(sidecar.replace_extension(".json")));

  const Outcome again = run_profile(arguments);  // resume: nothing left to measure
  ASSERT_EQ(again.exit_code, 0);
  EXPECT_EQ(shapescope::csv::read_file(csvs[0]).rows.size(), 2u);
  fs::remove_all(out);
}

}  // namespace
