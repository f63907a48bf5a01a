// Runs the built `analyze` binary with the triage options: files written, the
// default rule, and one-line errors for unusable combinations.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/analyze_cli_support.hpp"
#include "triage_test_support.hpp"

namespace shapescope::analyze {
namespace {

class TriageCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing_support::analyze_binary_built()) GTEST_SKIP() << "analyze binary not built";
    // 40 points at MFU 0.7 with a 30% cliff at M = 400..480.
    std::ofstream profile(path("p.csv"));
    profile << "batch,kernel_time,flops,utils\n";
    for (int i = 1; i <= 40; ++i) {
      const int m = 16 * i;
      const double utils = (m >= 400 && m <= 480 ? 0.49 : 0.70) * (1 + 0.002 * (i % 3));
      profile << m << "," << 2.0 * m * 4096 * 4096 / (utils * 100e6) << "," << utils * 100 << "," << utils << "\n";
    }
  }

  testing_support::CliResult run(const std::string& arguments) const {
    return testing_support::run_analyze(dir_, arguments);
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }

  testing_support::ScratchDir dir_;
};

TEST_F(TriageCli, WritesPlotReportsAndDispatchWithTheNoiseAwareRule) {
  const auto [code, output] = run(path("p.csv") + " --check-split-gemm --out-dir " + path("out") + " --plot " +
                                  path("p.svg") + " --log-m --report " + path("p.html") + " --dispatch " +
                                  path("d.json"));
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("anomalies (noise-aware rule"), std::string::npos) << output;
  EXPECT_NE(output.find("causes ("), std::string::npos) << output;
  for (const char* file : {"p.svg", "p.html", "d.json"}) EXPECT_TRUE(std::filesystem::exists(path(file))) << file;
  const nlohmann::json dispatch = nlohmann::json::parse(std::ifstream(path("d.json")));
  EXPECT_EQ(dispatch["schema"], "shapescope-dispatch/1");
  const auto [md_code, md_output] = run(path("p.csv") + " --out-dir " + path("out") + " --report " + path("p.md"));
  ASSERT_EQ(md_code, 0) << md_output;
  std::stringstream markdown;
  markdown << std::ifstream(path("p.md")).rdbuf();
  EXPECT_NE(markdown.str().find("| M | MFU |"), std::string::npos);
}

TEST_F(TriageCli, AbsurdMfuOrNearZeroTimeEndsWithTheRowsExcluded) {
  // Before the bound, the plot's grid stepped 0.1 up to MFU 1e20 and never ended: `timeout` turns a hang into a
  // failure.
  std::ofstream(path("absurd.csv")) << "batch,kernel_time,flops,utils\n1,10,1,0.5\n2,10,2,1e20\n3,1e-300,3,0.5\n"
                                       "4,10,4,0.52\n8,30,2,0.2\n";
  const auto [code, output] =
      testing_support::run_command(dir_, "timeout 20 " + testing_support::analyze_binary().string() + " " +
                                             path("absurd.csv") + " --rule study --check-split-gemm --out-dir " +
                                             path("out") + " --plot " + path("a.svg") + " --report " + path("a.html"));
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("M=2 (implausible: MFU 1e+20 outside 0..2, line 3)"), std::string::npos) << output;
  EXPECT_NE(output.find("M=3 (implausible: time 1e-300 us below 0.001 us, line 4)"), std::string::npos) << output;
  EXPECT_EQ(output.find("100.0% faster"), std::string::npos) << output;
  EXPECT_LT(std::filesystem::file_size(path("a.svg")), 20000u);
}

TEST_F(TriageCli, StabilityAloneNeedsNoOtherProfile) {
  std::ofstream(path("passes.csv")) << "pass,batch,kernel_time,flops,utils\n1,16,10,2,0.5\n1,32,10,4,0.6\n"
                                       "2,16,10,2,0.5\n2,32,10,4,0.6\n";
  const auto [code, output] = run("--stability " + path("passes.csv"));
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("stability of the noise-aware rule over 2 runs"), std::string::npos) << output;
}

TEST_F(TriageCli, PassesJudgesTwoFilesTogether) {
  // The same profile twice: the cliff at M = 400..480 holds in both passes.
  std::filesystem::copy_file(path("p.csv"), path("q.csv"));
  const auto [code, output] = run("--passes " + path("p.csv") + " " + path("q.csv"));
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("the drop holds across passes at 6 M: 400 416 432 448 464 480"), std::string::npos) << output;
  const auto [study, study_output] = run("--rule study --passes " + path("p.csv") + " " + path("q.csv"));
  EXPECT_NE(study, 0);
  EXPECT_NE(study_output.find("leave out --rule study"), std::string::npos) << study_output;
  const auto [one, one_output] = run("--passes " + path("p.csv"));
  EXPECT_NE(one, 0);
  EXPECT_NE(one_output.find("no row aggregates several passes"), std::string::npos) << one_output;
}

TEST_F(TriageCli, UnusableCombinationsFailWithOneLine) {
  const auto [bad_report, report_output] = run(path("p.csv") + " --out-dir " + path("out") + " --report " + path("r.txt"));
  EXPECT_NE(bad_report, 0);
  EXPECT_NE(report_output.find("name it .html"), std::string::npos) << report_output;
  std::ofstream(path("v.json")) << R"({"plans":[]})";
  const auto [bad_verify, verify_output] =
      run(path("p.csv") + " --out-dir " + path("out") + " --verify-results " + path("v.json"));
  EXPECT_NE(bad_verify, 0);
  EXPECT_NE(verify_output.find("add --report"), std::string::npos) << verify_output;
  const auto [bad_rule, rule_output] = run(path("p.csv") + " --rule max");
  EXPECT_NE(bad_rule, 0);
  EXPECT_NE(rule_output.find("noise-aware, study"), std::string::npos) << rule_output;
  EXPECT_NE(run("--stability " + path("p.csv")).exit_code, 0) << "one run has nothing to compare with";
}

}  // namespace
}  // namespace shapescope::analyze
