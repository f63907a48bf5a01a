// Runs the built `analyze` binary: exit codes, messages and files written.
#include <fstream>

#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyze/noise_aware_rule.hpp"
#include "analyze/series.hpp"
#include "analyze_test_support.hpp"
#include "common/kernel_counters.hpp"
#include "tests/analyze_cli_support.hpp"

namespace shapescope::analyze {
namespace {

using testing_support::CliResult;
using testing_support::expect_user_error;
using testing_support::run_analyze;

class AnalyzeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing_support::analyze_binary_built()) GTEST_SKIP() << "analyze binary not built";
  }
  testing::ScratchDir dir_;
};

TEST_F(AnalyzeCli, WritesStudyFilesAndJsonAndSummarizes) {
  const auto profile = dir_.write("p.csv", "batch,kernel_time,flops,utils\n4,10,4,0.4\n8,12,6.6,0.66\n12,40,3,0.3\n");
  const auto out = dir_.path() / "out";
  const auto json = dir_.path() / "r.json";
  const CliResult run = run_analyze(dir_, profile.string() + " --rule study --check-split-gemm --out-dir " +
                                            out.string() + " --json " + json.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("anomalies (study rule, utils ratio 0.85): 1"), std::string::npos) << run.output;
  EXPECT_TRUE(std::filesystem::exists(out / "low_utils_p.csv"));
  EXPECT_TRUE(std::filesystem::exists(out / "split_gemm_p.csv"));
  const nlohmann::json report = nlohmann::json::parse(std::ifstream(json));
  EXPECT_EQ(report["series"][0]["anomalies"][0]["best_plan"]["parts"], nlohmann::json::array({4, 8}));
}

TEST_F(AnalyzeCli, EmptyOrBadInputExitsWithOneLine) {
  expect_user_error(run_analyze(dir_, dir_.write("e.csv", "batch,kernel_time,flops,utils\n").string()), "no rows");
  expect_user_error(run_analyze(dir_, dir_.write("u.csv", "a,b\n1,2\n").string()), "formats tried");
  expect_user_error(run_analyze(dir_, ""), "no input");
}

TEST_F(AnalyzeCli, EveryUserErrorIsOneLineAndExit2) {
  expect_user_error(run_analyze(dir_, (dir_.path() / "absent.csv").string()), "no such file");
  std::filesystem::create_directories(dir_.path() / "folder.csv");
  expect_user_error(run_analyze(dir_, (dir_.path() / "folder.csv").string()), "a folder, not a CSV file");
  expect_user_error(run_analyze(dir_, "/dev/null"), "not a regular file");
  expect_user_error(run_analyze(dir_, "--bogus"), "(see analyze --help)");
  expect_user_error(run_analyze(dir_, "--compare only_one.csv"), "--compare");
  expect_user_error(run_analyze(dir_, "/tmp/" + std::string(4040, 'a')), "File name too long");
  const auto newline = dir_.write("newline.csv", "batch,kernel_time,flops,utils\n1,\"1\n2\",1,0.5\n");
  expect_user_error(run_analyze(dir_, newline.string()), "holds '1\\n2'");
  const auto profile = dir_.write("s.csv", "batch,kernel_time,flops,utils\n1,10,1,0.5\n");
  expect_user_error(run_analyze(dir_, profile.string() + " --out-dir " + (dir_.path() / "out").string() + " --plot " +
                                          (dir_.path() / std::string(300, 'b')).string() + ".svg"),
                    "File name too long");
  const std::string long_out_dir = (dir_.path() / std::string(300, 'o')).string();
  expect_user_error(run_analyze(dir_, profile.string() + " --out-dir " + long_out_dir), "File name too long");
  EXPECT_EQ(run_analyze(dir_, "--help").exit_code, 0);
}

TEST_F(AnalyzeCli, NumericOptionsMustBeFiniteAndInRange) {
  const std::string profile = dir_.write("p.csv", "batch,kernel_time,flops,utils\n4,10,4,0.4\n8,30,2,0.2\n").string();
  const std::string out = " --out-dir " + (dir_.path() / "out").string();
  for (const auto& [arguments, named] : std::vector<std::pair<std::string, std::string>>{
           {profile + " --utils-ratio nan", "--utils-ratio nan"},
           {profile + " --check-split-gemm --split-ratio nan", "--split-ratio nan"},
           {profile + " --check-split-gemm --launch-overhead-us inf", "--launch-overhead-us inf"},
           {"--compare " + profile + " " + profile + " --tie-band nan", "--tie-band nan"},
           {profile + " --peak-tflops inf", "--peak-tflops"}}) {
    expect_user_error(run_analyze(dir_, arguments + out), named);
  }
}

// --explain-with-counters: the counters file beside a profile becomes evidence; without it,
// one line naming the file expected.
TEST_F(AnalyzeCli, ExplainWithCountersReadsTheFileBesideTheProfile) {
  const std::filesystem::path committed = std::filesystem::path(SHAPESCOPE_SOURCE_DIR) /
                                          "profiles/nvidia_h100_80gb_hbm3/"
                                          "llama3_8b_gate_up_proj_tp2_N14336_K4096_fp8_blockscale_graph.csv";
  const std::filesystem::path profile = dir_.path() / "llama_fp8.csv";
  std::filesystem::copy_file(committed, profile);
  expect_user_error(run_analyze(dir_, profile.string() + " --explain-with-counters --out-dir " +
                                          (dir_.path() / "out").string()),
                    "no counters beside");
  // The profile's first anomaly (whatever the committed measurement holds) gets a hidden second kernel.
  const std::vector<Anomaly> anomalies = noise_aware_anomalies(read_series_file(profile.string(), {}).at(0), {});
  ASSERT_FALSE(anomalies.empty()) << "the committed profile has no anomaly to explain";
  const int64_t m = anomalies.front().m, reference = anomalies.front().reference_m;
  std::vector<KernelCounters> rows;
  for (const int64_t at : {reference, m}) {
    KernelCounters counters;
    counters.m = at;
    counters.duration_us = 30;
    counters.kernels = {"fp8_blockscale_kernel"};
    if (at == m) counters.kernels.push_back("splitk_reduce_kernel");
    rows.push_back(counters);
  }
  write_counters_file(counters_path(profile), rows);
  const CliResult run = run_analyze(dir_, profile.string() + " --explain-with-counters --out-dir " +
                                              (dir_.path() / "out").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find(fmt::format("extra kernel: split-K reduction (splitk_reduce_kernel); M={} launched 2 "
                                        "kernel(s), M={} 1",
                                        m, reference)),
            std::string::npos)
      << run.output;
}

}  // namespace
}  // namespace shapescope::analyze
