// `profile --plugin`: the example plugins (examples/plugins/) swept end to end on the CPU backend through the
// built binary, in every timing mode; failing plugins give rows with a status and a note and the sweep goes on;
// a plugin of another ABI version is one line and exit 2.
#include <gtest/gtest.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "common/csv.hpp"
#include "tests/profile_cli_support.hpp"

namespace {

namespace fs = std::filesystem;

using shapescope::testing_support::Outcome;
using shapescope::testing_support::run_profile;

fs::path plugin_dir() { return fs::path(SHAPESCOPE_BIN_DIR).parent_path() / "lib"; }

class PluginCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!shapescope::testing_support::profile_binary_built() || !fs::exists(plugin_dir() / "libcpu_example_plugin.so"))
      GTEST_SKIP() << "profile or the example plugins not built";
    // A tiny Llama-style model: o_proj is N=256, K=256, so plain C loops stay fast.
    config_ = out_ / "tiny_config.json";
    std::ofstream(config_) << R"({"model_type": "llama", "hidden_size": 256, "num_attention_heads": 2,
                                   "num_key_value_heads": 1, "head_dim": 128, "intermediate_size": 384})";
  }
  std::string sweep(const std::string& plugin, const std::string& kernels, const std::string& m_list) const {
    return "--plugin " + (plugin_dir() / plugin).string() + " " + kernels + " --hf-config " + config_.string() +
           " --model tiny --module o_proj --backend cpu --threads 1 --peak-tflops 1 --m-list " + m_list +
           " --min-samples 2 --max-samples 3 --warmup 0 --max-seconds-per-point 0 --out " + out_.string();
  }
  // status and note per M of the CSV whose name ends in `suffix`.
  std::map<int, std::pair<std::string, std::string>> rows_of(const std::string& suffix) const {
    std::map<int, std::pair<std::string, std::string>> rows;
    for (const auto& entry : fs::directory_iterator(out_)) {
      const std::string name = entry.path().filename().string();
      if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      const shapescope::csv::Table table = shapescope::csv::read_file(entry.path());
      for (const auto& row : table.rows)
        rows[std::stoi(row[0])] = {row[size_t(table.column("status"))], row[size_t(table.column("note"))]};
    }
    return rows;
  }

  shapescope::testing_support::ScratchDir scratch_;
  const fs::path out_ = scratch_.path();
  fs::path config_;
};

TEST_F(PluginCli, ExampleCpuPluginIsCheckedAndTimedInEveryTimingMode) {
  for (const std::string timing : {"events", "graph", "kernel"}) {
    const Outcome outcome = run_profile(
        sweep("libcpu_example_plugin.so", "--kernel example_cpu_bf16 --kernel example_cpu_fp8_blockscale", "1,3") +
        " --timing " + timing);
    ASSERT_EQ(outcome.exit_code, 0) << timing << ": " << outcome.stderr_text;
    for (const std::string kernel : {"example_cpu_bf16", "example_cpu_fp8_blockscale"}) {
      const fs::path csv = out_ / ("tiny_o_proj_tp1_N256_K256_" + kernel + (timing == "events" ? "" : "_" + timing) +
                                   ".csv");
      ASSERT_TRUE(fs::exists(csv)) << csv;
      const shapescope::csv::Table table = shapescope::csv::read_file(csv);
      ASSERT_EQ(table.rows.size(), 2u) << csv;
      for (const auto& row : table.rows) {
        EXPECT_EQ(row[size_t(table.column("status"))], "ok") << csv << ": " << row[size_t(table.column("note"))];
        EXPECT_LT(std::stod(row[size_t(table.column("rel_err"))]), 1e-2) << csv;
        EXPECT_GT(std::stod(row[size_t(table.column("kernel_time"))]), 0.0) << csv;
        EXPECT_EQ(row[size_t(table.column("timing"))], timing);
        EXPECT_EQ(row[size_t(table.column("kernel"))], kernel);
      }
      EXPECT_TRUE(fs::exists(fs::path(csv).replace_extension(".json")));
    }
  }
}

TEST_F(PluginCli, FailuresBecomeRowsAndTheSweepGoesOn) {
  const Outcome outcome = run_profile(sweep("libfailing_plugins.so",
                                            "--kernel failing_prepare --kernel failing_run --kernel "
                                            "failing_writes_nothing --kernel failing_wrong_numbers --kernel "
                                            "failing_crash_in_prepare --kernel cpu_bf16",
                                            "1,3,5"));
  ASSERT_EQ(outcome.exit_code, 0) << outcome.stderr_text;
  const auto prepare = rows_of("_failing_prepare.csv");
  ASSERT_EQ(prepare.size(), 3u);
  EXPECT_EQ(prepare.at(3).first, "error");
  EXPECT_NE(prepare.at(3).second.find("prepare failed (7): no tile for M=3"), std::string::npos) << prepare.at(3).second;

  const auto run = rows_of("_failing_run.csv");
  EXPECT_EQ(run.at(1).first, "error");
  EXPECT_NE(run.at(1).second.find("run failed (3): device lost"), std::string::npos) << run.at(1).second;

  for (const auto& [m, row] : rows_of("_failing_writes_nothing.csv")) {
    EXPECT_EQ(row.first, "numerical_fail") << m;
    EXPECT_NE(row.second.find("unwritten"), std::string::npos) << row.second;
  }
  for (const auto& [m, row] : rows_of("_failing_wrong_numbers.csv")) {
    EXPECT_EQ(row.first, "numerical_fail") << m;
    EXPECT_NE(row.second.find("rel_err"), std::string::npos) << row.second;
  }
  const auto crash = rows_of("_failing_crash_in_prepare.csv");
  ASSERT_EQ(crash.size(), 3u);
  EXPECT_EQ(crash.at(1).first, "numerical_fail");  // prepared fine, writes zeros
  EXPECT_EQ(crash.at(3).first, "error");
  EXPECT_NE(crash.at(3).second.find("crashed in prepare at M=3"), std::string::npos) << crash.at(3).second;
  EXPECT_EQ(crash.at(5).first, "error");
  EXPECT_NE(crash.at(5).second.find("not called again"), std::string::npos) << crash.at(5).second;

  // The built-in kernel after the failing plugins still ran.
  const auto builtin = rows_of("_cpu_bf16.csv");
  ASSERT_EQ(builtin.size(), 3u);
  for (const auto& [m, row] : builtin) EXPECT_EQ(row.first, "ok") << m;
}

TEST_F(PluginCli, OtherAbiVersionOrMissingLibraryIsOneLineAndExit2) {
  for (const std::string& arguments :
       {sweep("libwrong_abi_plugin.so", "", "1"), sweep("libno_such_plugin.so", "--kernel x", "1")}) {
    const Outcome outcome = run_profile(arguments);
    EXPECT_EQ(outcome.exit_code, 2) << outcome.stderr_text;
    EXPECT_EQ(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n'), 1) << outcome.stderr_text;
  }
  const Outcome wrong = run_profile(sweep("libwrong_abi_plugin.so", "", "1"));
  EXPECT_NE(wrong.stderr_text.find("ABI version 3, this shapescope speaks versions 1 to 2"), std::string::npos)
      << wrong.stderr_text;
}

TEST_F(PluginCli, ListKernelsAddsThePluginsAfterTheBuiltInsUnchanged) {
  const Outcome plain = run_profile("--list-kernels");
  const Outcome with = run_profile("--plugin " + (plugin_dir() / "libcpu_example_plugin.so").string() +
                                   " --list-kernels");
  ASSERT_EQ(plain.exit_code, 0);
  ASSERT_EQ(with.exit_code, 0) << with.stderr_text;
  ASSERT_GT(with.stdout_text.size(), plain.stdout_text.size());
  EXPECT_EQ(with.stdout_text.substr(0, plain.stdout_text.size()), plain.stdout_text);
  const std::string added = with.stdout_text.substr(plain.stdout_text.size());
  EXPECT_NE(added.find("example_cpu_bf16  [cpu, bf16, takes bf16]"), std::string::npos) << added;
  EXPECT_NE(added.find("A e4m3 1x128 f32 scales M-major, B e4m3 128x128 f32 scales, K blocks padded to 4"),
            std::string::npos)
      << added;
}

}  // namespace
