// Runs the built `profile` binary: user errors are one line on stderr and exit 2,
// and a tiny sweep writes a CSV the study's layout reads.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/csv.hpp"
#include "common/sidecar_schema.hpp"
#include "tests/profile_cli_support.hpp"

namespace {

namespace fs = std::filesystem;

using shapescope::testing_support::expect_user_error;
using shapescope::testing_support::Outcome;
using shapescope::testing_support::run_profile;

class ProfileCli : public shapescope::testing_support::ProfileCliTest {};

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

TEST_F(ProfileCli, CountersOnTheCpuAreRefusedBeforeAnyWork) {
  const fs::path out = scratch("out");
  expect_user_error("--model llama3_8b --backend cpu --kernel cpu_bf16 --m-list 1 --counters --out " + out.string(),
                    {"--counters", "cpu backend has no hardware counters"});
  int profiles_written = 0;
  if (fs::exists(out))
    for (const auto& entry : fs::directory_iterator(out)) profiles_written += entry.path().extension() == ".csv";
  EXPECT_EQ(profiles_written, 0);
}

TEST_F(ProfileCli, ConfigWhoseSizesOverflowIsRefusedBeforeAllocation) {
  const fs::path config = scratch("big_config.json");
  std::ofstream(config) << R"({"model_type": "llama", "hidden_size": 4294967296, "intermediate_size": 4294967296,
                                "num_attention_heads": 32, "num_key_value_heads": 8})";
  const fs::path out = scratch("out");
  expect_user_error("--hf-config " + config.string() + " --model big --backend cpu --m-list 1 --peak-tflops 1 --out " +
                        out.string(),
                    {"big_config.json", "'hidden_size' is 4294967296; expected at most"});
}

TEST_F(ProfileCli, HugeOrOverflowingSweepsAreRefusedAtOnce) {
  const fs::path out = scratch("out");
  const std::string base = "--model llama3_8b --module o_proj --backend cpu --peak-tflops 1 --out " + out.string();
  expect_user_error(base + " --m-range 1:1000000000000:1", {"1000000000000 M values", "--allow-large-sweep"});
  expect_user_error(base + " --m-range 1:100000000:1", {"100000000 M values", "--allow-large-sweep"});
  expect_user_error(base + " --m-range 9223372036854775806:9223372036854775807:9223372036854775807",
                    {"M=9223372036854775806"});
}

TEST_F(ProfileCli, TwoSweepsIntoOneFileAtOnceKeepEveryRow) {
  const fs::path out = scratch("out");
  const std::string binary = (fs::path(SHAPESCOPE_BIN_DIR) / "profile").string();
  const std::string common = " --model qwen3_4b --module o_proj --tp 8 --backend cpu --threads 1 --kernel cpu_bf16 "
                             "--peak-tflops 1 --warmup 0 --min-samples 10 --max-samples 10 --out " + out.string();
  const std::string both = "(" + binary + common + " --m-list 1,2,3,4,5,6 >/dev/null 2>&1; echo $? > " +
                           (out.string() + "_a") + ") & (" + binary + common + " --m-list 7,8,9,10,11,12 >/dev/null " +
                           "2>&1; echo $? > " + (out.string() + "_b") + ") & wait";
  ASSERT_EQ(std::system(("timeout 120 sh -c '" + both + "'").c_str()), 0);
  for (const char* run : {"_a", "_b"}) {
    std::ifstream code(out.string() + run);
    int exit_code = -1;
    code >> exit_code;
    EXPECT_EQ(exit_code, 0) << run;
  }
  const shapescope::csv::Table table = shapescope::csv::read_file(out / "qwen3_4b_o_proj_tp8_N2560_K512_cpu_bf16.csv");
  ASSERT_EQ(table.rows.size(), 12u) << "one run's rows were lost";
  for (std::size_t i = 0; i < 12; ++i) EXPECT_EQ(table.rows[i][0], std::to_string(i + 1));
}

TEST_F(ProfileCli, ResumeWithOtherOptionsIsRefusedBeforeAnyWork) {
  const fs::path out = scratch("out");
  const std::string arguments = "--model qwen3_4b --module o_proj --tp 8 --backend cpu --threads 1 --kernel cpu_bf16 "
                                "--peak-tflops 1 --m-list 1,3 --min-samples 2 --warmup 0 --out " + out.string();
  ASSERT_EQ(run_profile(arguments).exit_code, 0);
  const fs::path csv = out / "qwen3_4b_o_proj_tp8_N2560_K512_cpu_bf16.csv";
  const auto written = fs::last_write_time(csv);
  expect_user_error(arguments + " --hot --m-list 5", {"cannot resume", "cache: cold in the file, hot in this run"});
  expect_user_error(arguments + " --seed 7 --m-list 5", {"seed: 1 in the file, 7 in this run"});
  // Every M already in the file: nothing would be measured under the other seed, so nothing is mixed.
  EXPECT_EQ(run_profile(arguments + " --seed 7").exit_code, 0);
  EXPECT_EQ(fs::last_write_time(csv), written);
  std::ofstream(csv) << "batch,kernel_time,flops,utils\n1,10,1,0.5\n3,10,1,0.5\n";  // the study's format
  expect_user_error(arguments, {"not a shapescope profile"});
}

TEST_F(ProfileCli, BlockingKernelIsOnOrOffAndResumeKeepsItsFilesApart) {
  const fs::path out = scratch("out");
  const std::string sweep = "--model qwen3_4b --module o_proj --tp 8 --backend cpu --threads 1 --kernel cpu_bf16 "
                            "--peak-tflops 1 --m-list 1 --min-samples 2 --warmup 0";
  const std::string arguments = sweep + " --out " + out.string();
  expect_user_error(arguments + " --blocking-kernel maybe", {"--blocking-kernel 'maybe' is not on or off"});
  EXPECT_FALSE(fs::exists(out)) << "refused before any work";
  const fs::path csv = out / "qwen3_4b_o_proj_tp8_N2560_K512_cpu_bf16.csv";
  ASSERT_EQ(run_profile(arguments).exit_code, 0);  // off by default
  auto recorded = shapescope::read_sidecar(csv);
  ASSERT_TRUE(recorded);
  EXPECT_FALSE(shapescope::parse_sidecar(*recorded).measurement.blocking_kernel);
  expect_user_error(arguments + " --blocking-kernel on --m-list 3",
                    {"cannot resume", "blocking_kernel: (none) in the file, on in this run"});
  fs::remove_all(out);
  ASSERT_EQ(run_profile(arguments + " --blocking-kernel on").exit_code, 0);  // cold event samples are held
  recorded = shapescope::read_sidecar(csv);
  ASSERT_TRUE(recorded);
  EXPECT_TRUE(shapescope::parse_sidecar(*recorded).measurement.blocking_kernel);
  expect_user_error(arguments + " --blocking-kernel off --m-list 3",
                    {"cannot resume", "blocking_kernel: \"on\" in the file, (none) in this run"});
  EXPECT_EQ(run_profile(arguments + " --blocking-kernel on --m-list 3").exit_code, 0);
  // Graph timing holds nothing: the option leaves its files alone.
  const std::string graph = sweep + " --timing graph --out " + scratch("graph").string();
  ASSERT_EQ(run_profile(graph).exit_code, 0);
  EXPECT_EQ(run_profile(graph + " --blocking-kernel off --m-list 3").exit_code, 0);
}

TEST_F(ProfileCli, NumericOptionsMustBeFiniteAndInRange) {
  const fs::path out = scratch("out");
  const std::string base =
      "--model qwen3_4b --module o_proj --tp 8 --backend cpu --kernel cpu_bf16 --m-list 1 --out " + out.string();
  expect_user_error(base + " --max-seconds-per-point nan", {"--max-seconds-per-point nan", "from 0 to 3600"});
  expect_user_error(base + " --target-rel-stderr nan", {"--target-rel-stderr nan"});
  expect_user_error(base + " --target-rel-stderr inf", {"--target-rel-stderr inf"});
  expect_user_error(base + " --threads 100000", {"--threads 100000", "cores"});
  expect_user_error(base + " --seed -1", {"--seed -1", "18446744073709551615"});
  expect_user_error(base + " --peak-tflops nan", {"--peak-tflops nan"});
  expect_user_error(base + " --repeat 0", {"--repeat 0"});
  EXPECT_FALSE(fs::exists(out)) << "refused before any work";
}

TEST_F(ProfileCli, PathsFoldersAndOddFieldsAreOneLineUserErrors) {
  const fs::path base = scratch("out");
  const std::string sweep = "--model qwen3_4b --module o_proj --tp 8 --backend cpu --kernel cpu_bf16 --m-list 1 "
                            "--peak-tflops 1 --out ";
  // A folder that can be created, but the CSV's path in it passes PATH_MAX (4096).
  fs::path deep = base;
  for (int level = 0; level < 20; ++level) deep /= std::string(201, 'd');
  ASSERT_LT(deep.string().size(), 4095u);
  ASSERT_GT(deep.string().size() + 45, 4095u);
  fs::create_directories(deep);
  expect_user_error(sweep + deep.string(), {"File name too long"});
  // A folder where the CSV goes.
  fs::create_directories(base / "qwen3_4b_o_proj_tp8_N2560_K512_cpu_bf16.csv");
  expect_user_error(sweep + base.string(), {"a folder where the profile CSV goes"});
  // A config field holding a newline is echoed escaped, on the one line.
  const fs::path config = base / "config.json";
  std::ofstream(config) << R"({"model_type": "not\nllama"})";
  expect_user_error("--hf-config " + config.string() + " --model x --backend cpu", {"'not\\nllama'"});
}

TEST_F(ProfileCli, ListKernelsShowsFormatsAndConfigs) {
  const Outcome outcome = run_profile("--list-kernels");
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_NE(outcome.stdout_text.find("cpu_fp8_blockscale"), std::string::npos);
  EXPECT_NE(outcome.stdout_text.find("B e4m3 128x128"), std::string::npos);
  EXPECT_NE(outcome.stdout_text.find("config:"), std::string::npos);
}

TEST_F(ProfileCli, TinySweepWritesAStudyReadableCsvAndResumes) {
  const fs::path out = scratch("out");
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
}

}  // namespace
