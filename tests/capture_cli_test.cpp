// `analyze --capture-sizes` end to end: synthetic llama3_8b tp2 profiles with sidecars,
// written here, through the built binary to the terminal, the JSON and the HTML page.
#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analyze_test_support.hpp"
#include "common/csv.hpp"
#include "common/profile_schema.hpp"
#include "tests/analyze_cli_support.hpp"

namespace shapescope::analyze {
namespace {

using testing_support::CliResult;
using testing_support::run_analyze;

struct Module {
  std::string name;
  int64_t n, k;
  std::map<int64_t, double> time_us;
};

// llama3_8b at tp2 (catalog: 32 layers), M = 1, 2, 4, 8, 12, 16; gate_up is slow at M=8.
const std::vector<Module> kLlamaTp2 = {
    {"qkv_proj", 3072, 4096, {{1, 10}, {2, 10}, {4, 11}, {8, 11}, {12, 12}, {16, 13}}},
    {"o_proj", 4096, 2048, {{1, 6}, {2, 6}, {4, 6}, {8, 7}, {12, 7}, {16, 8}}},
    {"gate_up_proj", 14336, 4096, {{1, 30}, {2, 30}, {4, 31}, {8, 60}, {12, 33}, {16, 36}}},
    {"down_proj", 4096, 7168, {{1, 15}, {2, 15}, {4, 16}, {8, 16}, {12, 17}, {16, 18}}},
};

std::filesystem::path write_profile(const testing::ScratchDir& dir, const Module& module, int tp = 2) {
  const std::string stem = fmt::format("llama3_8b_{}_tp{}_N{}_K{}_fp8_blockscale", module.name, tp, module.n, module.k);
  std::string text = csv::format_row(profile_columns());
  for (const auto& [m, time_us] : module.time_us) {
    ProfileRow row;
    row.batch = row.m = m;
    row.n = module.n;
    row.k = module.k;
    row.kernel_time_us = time_us;
    row.tflops = 2.0 * static_cast<double>(m * module.n * module.k) / (time_us * 1e6);
    row.utils = row.tflops / 1978.9;
    row.kernel_name = "fp8_blockscale 128x128";
    row.dtype = "fp8";
    row.kernel = "fp8_blockscale";
    row.backend = "cuda";
    row.device = "NVIDIA H100 80GB HBM3";
    row.peak_tflops = 1978.9;
    text += csv::format_row(to_fields(row));
  }
  const std::filesystem::path csv_path = dir.write(stem + ".csv", text);
  dir.write(stem + ".json",
            fmt::format(R"({{"device": {{"name": "NVIDIA H100 80GB HBM3", "multiprocessors": 132}},
                           "problem": {{"model": "llama3_8b", "module": "{}", "tp": {}, "n": {}, "k": {}}}}})",
                        module.name, tp, module.n, module.k));
  return csv_path;
}

class CaptureCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing_support::analyze_binary_built()) GTEST_SKIP() << "analyze binary not built";
    for (const Module& module : kLlamaTp2) profiles_ += write_profile(dir_, module).string() + " ";
  }
  // One line on stderr naming the problem, exit 2.
  void expect_one_line_error(const std::string& arguments, const std::string& expected) {
    testing_support::expect_user_error(run_analyze(dir_, arguments), expected);
  }
  testing::ScratchDir dir_;
  std::string profiles_;
};

double step_us(int64_t m) {
  double sum = 0;
  for (const Module& module : kLlamaTp2) sum += 32 * module.time_us.at(m);
  return sum;
}

// The cheapest list of at most `budget` of `sizes` covering 1..16 (uniform), by brute force.
double cheapest_expected(const std::vector<int64_t>& sizes, std::size_t budget) {
  double best = std::numeric_limits<double>::infinity();
  for (uint32_t mask = 1; mask < (1u << sizes.size()); ++mask) {
    std::vector<int64_t> list;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (mask & (1u << i)) list.push_back(sizes[i]);
    }
    if (list.size() > budget || list.back() < 16) continue;
    double total = 0;
    for (int64_t batch = 1; batch <= 16; ++batch) total += step_us(*std::lower_bound(list.begin(), list.end(), batch));
    best = std::min(best, total / 16);
  }
  return best;
}

TEST_F(CaptureCli, RecommendsSizesAndWritesJsonAndHtml) {
  const auto json_path = dir_.path() / "capture.json";
  const auto html_path = dir_.path() / "capture.html";
  const CliResult run = run_analyze(dir_, profiles_ + "--capture-sizes --m-weights uniform:16 --max-graphs 2 --json " +
                                              json_path.string() + " --report " + html_path.string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("capture sizes for llama3_8b at tp2 on NVIDIA H100 80GB HBM3"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("vLLM default (5 graphs)"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("--cuda-graph-bs "), std::string::npos) << run.output;

  const nlohmann::json report = nlohmann::json::parse(std::ifstream(json_path));
  EXPECT_EQ(report["model"], "llama3_8b");
  EXPECT_EQ(report["tp"], 2);
  const std::vector<int64_t> grid = {1, 2, 4, 8, 12, 16};
  ASSERT_EQ(report["grid"].size(), grid.size());
  for (std::size_t i = 0; i < grid.size(); ++i) {
    EXPECT_EQ(report["grid"][i]["m"], grid[i]);
    EXPECT_DOUBLE_EQ(report["grid"][i]["step_us"].get<double>(), step_us(grid[i])) << grid[i];
  }
  const nlohmann::json& lists = report["lists"];
  EXPECT_EQ(lists[0]["key"], "vllm_default");
  EXPECT_EQ(lists[0]["sizes"], nlohmann::json::array({1, 2, 4, 8, 16}));
  EXPECT_EQ(report["recommended"], "optimum_max_graphs");
  const auto recommended = std::find_if(lists.begin(), lists.end(),
                                        [](const nlohmann::json& list) { return list["key"] == "optimum_max_graphs"; });
  ASSERT_NE(recommended, lists.end());
  EXPECT_LE((*recommended)["sizes"].size(), 2u);
  EXPECT_NEAR((*recommended)["expected_step_us"].get<double>(), cheapest_expected(grid, 2), 1e-9);
  const auto same_budget = std::find_if(
      lists.begin(), lists.end(), [](const nlohmann::json& list) { return list["key"] == "optimum_default_budget"; });
  EXPECT_NEAR((*same_budget)["expected_step_us"].get<double>(), cheapest_expected(grid, 5), 1e-9);
  // M=8 is slow in gate_up: with five graphs, batches 5..8 are served at 12, so 8 is not listed.
  const std::vector<int64_t> five = (*same_budget)["sizes"].get<std::vector<int64_t>>();
  EXPECT_EQ(std::count(five.begin(), five.end(), 8), 0);
  // Everything a replay needs: per-module shapes and kernels per M, a prediction per batch.
  ASSERT_EQ(report["modules"].size(), 4u);
  EXPECT_EQ(report["modules"][2]["module"], "gate_up_proj");
  EXPECT_EQ(report["modules"][2]["n"], 14336);
  EXPECT_EQ(report["modules"][2]["layers"], 32);
  EXPECT_EQ(report["modules"][2]["points"][3]["kernel"], "fp8_blockscale");
  ASSERT_EQ(report["batches"].size(), 16u);
  EXPECT_EQ(report["batches"][4]["batch"], 5);
  EXPECT_EQ(report["batches"][4]["served"]["vllm_default"]["size"], 8);
  EXPECT_DOUBLE_EQ(report["batches"][4]["served"]["vllm_default"]["step_us"].get<double>(), step_us(8));

  std::stringstream html;
  html << std::ifstream(html_path).rdbuf();
  EXPECT_NE(html.str().find("<h2>Capture sizes</h2>"), std::string::npos);
  EXPECT_NE(html.str().find((*recommended)["sglang_cuda_graph_bs"].get<std::string>()), std::string::npos);
  EXPECT_EQ(html.str().find("<script"), std::string::npos);
  EXPECT_EQ(html.str().find("http"), std::string::npos);  // nothing fetched
}

TEST_F(CaptureCli, BadInputIsOneLineAndExitTwo) {
  const std::string three = profiles_.substr(0, profiles_.rfind(' ', profiles_.size() - 2) + 1);
  expect_one_line_error(three + "--capture-sizes --m-weights uniform:16",
                        "no profile for 1 module(s) of llama3_8b at tp2: down_proj");
  expect_one_line_error(profiles_ + "--capture-sizes --m-weights uniform:32",
                        "weight at batch 32, above the largest M every module measured (16)");
  expect_one_line_error(profiles_ + "--capture-sizes --m-weights uniform:16 --max-graphs 0",
                        "--max-graphs 0: a capture list needs at least one graph");
  expect_one_line_error(profiles_ + "--capture-sizes", "--capture-sizes needs --m-weights");
  expect_one_line_error(profiles_ + "--max-graphs 4", "apply to --capture-sizes");
  const auto other_tp = write_profile(dir_, {"down_proj", 4096, 14336, {{1, 15}, {2, 15}}}, 1);
  expect_one_line_error(three + other_tp.string() + " --capture-sizes --m-weights uniform:2",
                        "profiles of different TP degrees mixed");
  // Two weights of 1e308 sum to infinity: once an internal error (exit 1) deep in the list search.
  const auto overflowing = dir_.write("huge.csv", "m,weight\n1,1e308\n2,1e308\n");
  expect_one_line_error(profiles_ + "--capture-sizes --m-weights " + overflowing.string(),
                        "the weights so far sum past the largest double");
  const auto histogram = dir_.write("h.csv", "m,weight\n3,1\n40,2\n");
  expect_one_line_error(profiles_ + "--capture-sizes --m-weights " + histogram.string(),
                        "has weight at batch 40, above the largest M every module measured (16)");
}

}  // namespace
}  // namespace shapescope::analyze
