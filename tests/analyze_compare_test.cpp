#include "analyze/compare.hpp"

#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "analyze_test_support.hpp"
#include "common/csv.hpp"
#include "common/profile_schema.hpp"
#include "scratch_dir.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {
namespace {

using testing::make_series;

TEST(Compare, CountsWinsLossesAndTiesAndTakesGeometricMeans) {
  const std::vector<Series> a = {make_series({{1, 10}, {2, 10}, {3, 10}, {4, 10}})};
  const std::vector<Series> b = {make_series({{1, 5}, {2, 20}, {3, 10.05}, {4, 8}, {5, 1}})};
  const CompareResult result = compare_series(a, b, "A", "B", {});
  EXPECT_EQ(result.overall.points, 4u);
  EXPECT_EQ(result.overall.faster, 2u);
  EXPECT_EQ(result.overall.slower, 1u);
  EXPECT_EQ(result.overall.ties, 1u);  // 0.5% is inside the default 1% band
  EXPECT_EQ(result.only_in_b, 1u);
  EXPECT_NEAR(result.overall.geomean_speedup, std::pow(2.0 * 0.5 * (10 / 10.05) * 1.25, 0.25), 1e-12);
  EXPECT_DOUBLE_EQ(result.overall.max_slowdown, 1.0);
  EXPECT_EQ(compare_headline(result).rfind("2 of 4 points faster with B, 1 slower by 100.0% on average and up to "
                                           "100.0%, 1 tied",
                                           0),
            0u)
      << compare_headline(result);
  ASSERT_EQ(worst_slowdowns(result, 5).size(), 1u);
  EXPECT_EQ(worst_slowdowns(result, 5)[0].m, 2);
}

TEST(Compare, NoiseBandComesFromTheSpreadWhenBothPointsHaveOne) {
  std::vector<Series> a = {make_series({{1, 10}, {2, 10}})};
  std::vector<Series> b = {make_series({{1, 9}, {2, 9.9}})};
  for (auto* side : {&a, &b}) {
    for (SeriesPoint& point : (*side)[0].points) point.stddev_us = 0.5;
  }
  // Band 1.96 * hypot(0.5, 0.5) = 1.39: both differences (1 and 0.1) are ties.
  CompareResult result = compare_series(a, b, "A", "B", {});
  EXPECT_EQ(result.overall.ties, 2u);
  for (auto* side : {&a, &b}) {
    for (SeriesPoint& point : (*side)[0].points) point.stddev_us = 0.1;
  }
  result = compare_series(a, b, "A", "B", {});  // band 0.28 now
  EXPECT_EQ(result.overall.faster, 1u);
  EXPECT_EQ(result.overall.ties, 1u);
}

TEST(Compare, HeadlineSaysNoneSlowerWhenBWinsEverywhere) {
  const std::vector<Series> a = {make_series({{1, 10}, {2, 10}})};
  const std::vector<Series> b = {make_series({{1, 5}, {2, 8}})};
  EXPECT_EQ(compare_headline(compare_series(a, b, "A", "B", {})),
            "2 of 2 points faster with B, none slower, 0 tied; geometric-mean speedup x1.581");
}

TEST(Compare, ProfilesOfDifferentTimingModesAreRefusedUnlessAllowed) {
  std::vector<Series> a = {make_series({{1, 10}, {2, 10}})};
  std::vector<Series> b = {make_series({{1, 8}, {2, 8}})};
  a[0].timing = "events";
  b[0].timing = "graph";
  try {
    compare_series(a, b, "A", "B", {});
    FAIL() << "mixed timing compared";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("--allow-mixed-timing"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("A was timed with events and B with graph"), std::string::npos)
        << error.what();
  }
  CompareOptions allowed;
  allowed.allow_mixed_timing = true;
  EXPECT_EQ(compare_series(a, b, "A", "B", allowed).overall.faster, 2u);
  b[0].timing = "events";
  EXPECT_EQ(compare_series(a, b, "A", "B", {}).overall.points, 2u);
  b[0].timing = "";  // a study or AITER file says nothing: not refused
  EXPECT_EQ(compare_series(a, b, "A", "B", {}).overall.points, 2u);
}

TEST(Compare, NothingInCommonIsAnError) {
  const std::vector<Series> a = {make_series({{1, 10}})};
  const std::vector<Series> b = {make_series({{2, 10}})};
  EXPECT_THROW(compare_series(a, b, "A", "B", {}), UserError);
}

// The AITER normal vs pre-shuffled DeepSeek-V3 tables, recomputed from the CSV
// text: common (gfx, cu_num, M, N, K) points, fastest row per point.
TEST(Compare, AiterPreshuffledAgainstNormalMatchesAnIndependentCount) {
  const auto aiter = testing::data() / "aiter";
  const auto a_file = aiter / "a8w8_blockscale_tuned_gemm_ds_v3.csv";
  const auto b_file = aiter / "a8w8_blockscale_bpreshuffle_tuned_gemm_dsv3.csv";
  using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  const auto fastest = [](const std::filesystem::path& file) {
    const csv::Table table = csv::read_file(file);
    std::map<Key, double> times;
    const auto col = [&](const char* name) { return static_cast<std::size_t>(table.column(name)); };
    for (const auto& row : table.rows) {
      const Key key{row[col("gfx")], row[col("cu_num")], row[col("M")], row[col("N")], row[col("K")]};
      const double time = std::stod(row[col("us")]);
      const auto [it, inserted] = times.emplace(key, time);
      if (!inserted) it->second = std::min(it->second, time);
    }
    return times;
  };
  const auto times_a = fastest(a_file);
  const auto times_b = fastest(b_file);
  std::size_t common = 0, faster = 0;
  double log_sum = 0;
  for (const auto& [key, time_a] : times_a) {
    const auto it = times_b.find(key);
    if (it == times_b.end()) continue;
    ++common;
    faster += time_a / it->second > 1.01;
    log_sum += std::log(time_a / it->second);
  }
  ASSERT_GT(common, 0u);
  const CompareResult result =
      compare_series(read_series_file(a_file.string(), {}), read_series_file(b_file.string(), {}), "normal",
                     "preshuffled", {});
  EXPECT_EQ(result.overall.points, common);
  EXPECT_EQ(result.overall.faster, faster);
  EXPECT_NEAR(result.overall.geomean_speedup, std::exp(log_sum / static_cast<double>(common)), 1e-12);
}

}  // namespace
}  // namespace shapescope::analyze

namespace shapescope::analyze {
namespace {

// A profile of one shape in one block format: time per M, the format column as the profiler writes it.
std::string format_profile(const std::string& format, const std::string& dtype,
                           const std::vector<std::pair<int64_t, double>>& times) {
  std::string text = fmt::format("{}\n", fmt::join(profile_columns(), ","));
  for (const auto& [m, time_us] : times) {
    ProfileRow row;
    row.batch = row.m = m;
    row.n = 2880;
    row.k = 2880;
    row.kernel_time_us = time_us;
    row.tflops = 2.0 * double(m) * 2880 * 2880 / (time_us * 1e6);
    row.peak_tflops = 100;
    row.utils = row.tflops / row.peak_tflops;
    row.kernel = row.kernel_name = "cpu_a16w4_blockscale";
    row.dtype = dtype;
    row.device = "cpu";
    row.backend = "cpu";
    row.samples = 3;
    row.format = format;
    text += fmt::format("{}\n", fmt::join(to_fields(row), ","));
  }
  return text;
}

TEST(Compare, AcrossFormatsOfOneShapeSaysWhichFormatWinsAtEachM) {
  const testing_support::ScratchDir dir;
  const auto fp8 = dir.write("fp8.csv", format_profile("fp8_blockscale", "fp8", {{1, 20}, {16, 21}, {1024, 100}}));
  const auto nvfp4 = dir.write("nvfp4.csv", format_profile("nvfp4", "bf16", {{1, 10}, {16, 11}, {1024, 180}}));
  const std::vector<Series> a = read_series_file(fp8.string(), {}), b = read_series_file(nvfp4.string(), {});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].block_format, "fp8_blockscale");
  EXPECT_EQ(b[0].block_format, "nvfp4");
  const CompareResult result = compare_series(a, b, "fp8", "nvfp4", {});
  EXPECT_TRUE(compares_formats(result));
  ASSERT_EQ(result.points.size(), 3u);
  std::map<int64_t, std::string> winners;
  for (const ComparedPoint& point : result.points) winners[point.m] = winning_format(result, point);
  EXPECT_EQ(winners, (std::map<int64_t, std::string>{{1, "nvfp4"}, {16, "nvfp4"}, {1024, "fp8_blockscale"}}));
  // One format on both sides is an ordinary comparison.
  EXPECT_FALSE(compares_formats(compare_series(b, b, "x", "y", {})));
}

}  // namespace
}  // namespace shapescope::analyze
