// `analyze` on grouped profiles: the grouped columns are read, a file splits by routing
// and layout, the rules run over M (tokens), another layout of the same experts becomes a
// plan, and --compare pairs two routings point by point.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/analyze_command.hpp"
#include "analyze/series.hpp"
#include "common/profile_schema.hpp"
#include "profiler/profile_csv.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope::analyze {
namespace {

namespace fs = std::filesystem;

struct Point {
  int64_t m;
  double time_us;
};

// A grouped profile of one expert layer: useful FLOPs from 2 x (2 rows per token) x N x K.
std::vector<ProfileRow> grouped_rows(const std::vector<Point>& points, const std::string& routing,
                                     const std::string& layout) {
  std::vector<ProfileRow> rows;
  for (const Point& point : points) {
    ProfileRow row;
    row.batch = row.m = point.m;
    row.n = 4096;
    row.k = 7168;
    row.kernel = row.kernel_name = "fp8_blockscale_grouped";
    row.dtype = "fp8";
    row.backend = "cuda";
    row.device = "NVIDIA H100 80GB HBM3";
    row.peak_tflops = 1978.9;
    row.kernel_time_us = point.time_us;
    row.tflops = 2.0 * 2 * double(point.m) * 4096 * 7168 / point.time_us / 1e6;
    row.utils = row.tflops / row.peak_tflops;
    ProfileRow::Grouped& g = row.grouped.emplace();
    g.groups = 32;
    g.active_groups = 16;
    g.useful_rows = 2 * point.m;
    g.padded_rows = 128 * 16 - 2 * point.m;
    g.executed_utils = row.utils * 3;
    g.sol_fraction = 0.5;
    g.routing = routing;
    g.layout = layout;
    g.ep = 8;
    rows.push_back(row);
  }
  return rows;
}

class GroupedAnalyze : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::vector<ProfileRow>& rows) {
    const fs::path path = dir_ / name;
    profiler::write_profile_csv(path, rows);
    return path.string();
  }
  testing_support::ScratchDir scratch_;
  const fs::path dir_ = scratch_.path();
};

TEST_F(GroupedAnalyze, ReadsGroupedColumnsAndSplitsByRoutingAndLayout) {
  std::vector<ProfileRow> rows = grouped_rows({{16, 20}, {32, 21}}, "uniform", "contiguous:128");
  const std::vector<ProfileRow> masked = grouped_rows({{16, 19}, {32, 22}}, "uniform", "masked:128");
  rows.insert(rows.end(), masked.begin(), masked.end());
  const std::vector<Series> series = read_series_file(write("mixed.csv", rows), ReadOptions{});
  ASSERT_EQ(series.size(), 2u);
  ASSERT_TRUE(series[0].grouped.has_value());
  EXPECT_EQ(series[0].grouped->layout, "contiguous:128");
  EXPECT_EQ(series[1].grouped->layout, "masked");
  EXPECT_EQ(series[0].grouped->ep, 8);
  EXPECT_EQ(series[0].grouped->groups, 32);
  ASSERT_EQ(series[0].points.size(), 2u);
  EXPECT_EQ(series[0].points[1].useful_rows, 64);
  EXPECT_EQ(series[0].points[1].padded_rows, 128 * 16 - 64);
  EXPECT_DOUBLE_EQ(series[0].points[1].executed_utils, 3 * series[0].points[1].utils);
}

TEST_F(GroupedAnalyze, AnotherLayoutOfTheSameExpertsBecomesAPlan) {
  // MFU drops at M=128 in the contiguous:128 profile; the masked profile runs that M faster,
  // the contiguous:64 one slower.
  const std::string contiguous =
      write("contiguous128.csv", grouped_rows({{16, 20}, {32, 21}, {64, 22}, {128, 60}}, "uniform", "contiguous:128"));
  const std::string masked =
      write("masked.csv", grouped_rows({{16, 25}, {32, 26}, {64, 27}, {128, 30}}, "uniform", "masked:128"));
  const std::string aligned64 =
      write("contiguous64.csv", grouped_rows({{16, 20}, {32, 21}, {64, 22}, {128, 61}}, "uniform", "contiguous:64"));
  const std::string other_routing =
      write("lognormal.csv", grouped_rows({{16, 20}, {32, 21}, {64, 22}, {128, 10}}, "lognormal:1", "masked:128"));

  AnalyzeRequest request;
  request.inputs = {contiguous, masked, aligned64, other_routing};
  request.analysis.rule = AnomalyRule::study;
  request.analysis.check_split = true;
  request.out_dir = dir_ / "analysis";
  request.json_path = (dir_ / "report.json").string();
  std::ostringstream out;
  ASSERT_EQ(run_analyze(request, out), 0);
  EXPECT_NE(out.str().find("grouped: 32 experts per GPU (EP8), routing uniform, layout contiguous:128"),
            std::string::npos)
      << out.str();
  std::ifstream report_file(request.json_path);
  const nlohmann::json report = nlohmann::json::parse(report_file);
  const nlohmann::json& plans = report.at("series").at(0).at("layout_plans");
  ASSERT_EQ(plans.size(), 1u) << out.str();
  EXPECT_EQ(plans[0].at("m"), 128);
  EXPECT_EQ(plans[0].at("kind"), "layout");
  EXPECT_EQ(plans[0].at("to"), "masked");  // not the other routing's faster point, not the slower alignment
  EXPECT_DOUBLE_EQ(plans[0].at("planned_us").get<double>(), 30.0);
  EXPECT_NEAR(plans[0].at("gain").get<double>(), 0.5, 1e-12);
}

TEST_F(GroupedAnalyze, CompareBetweenRoutingsPairsEveryM) {
  const std::string uniform = write("uniform.csv", grouped_rows({{16, 20}, {32, 21}, {64, 22}}, "uniform", "contiguous:128"));
  const std::string skewed =
      write("lognormal.csv", grouped_rows({{16, 25}, {32, 28}, {64, 30}}, "lognormal:1.5", "contiguous:128"));
  AnalyzeRequest request;
  request.compare = {uniform, skewed};
  request.json_path = (dir_ / "compare.json").string();
  std::ostringstream out;
  ASSERT_EQ(run_analyze(request, out), 0);
  std::ifstream report_file(request.json_path);
  const nlohmann::json report = nlohmann::json::parse(report_file);
  EXPECT_EQ(report.at("compare").at("overall").at("points"), 3);
  EXPECT_EQ(report.at("compare").at("overall").at("slower"), 3);  // the skewed routing is slower at every M
}

}  // namespace
}  // namespace shapescope::analyze
