// profile --format aiter: the tables hold AITER's tuned-GEMM columns and analyze's AITER reader
// reads back the points the profile measured.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "analyze/readers.hpp"
#include "analyze/series.hpp"
#include "common/csv.hpp"
#include "profiler/aiter_export.hpp"
#include "tests/profile_cli_support.hpp"

namespace shapescope::profiler {
namespace {

namespace fs = std::filesystem;

ProfileRow row(int64_t m, int64_t n, int64_t k, double time_us, const std::string& launch, const std::string& status) {
  ProfileRow r;
  r.batch = r.m = m;
  r.n = n;
  r.k = k;
  r.kernel_time_us = time_us;
  r.tflops = 2.0 * double(m * n * k) / time_us / 1e6;
  r.kernel_name = launch;
  r.kernel = "hip_fp8_blockscale";
  r.device = "AMD Instinct MI300X (gfx942)";
  r.gbytes_per_s = 1234.5;
  r.rel_err = 0.0021;
  r.status = status;
  return r;
}

TEST(AiterExport, DeviceColumnIsTheArchitectureWhereTheNameHoldsOne) {
  EXPECT_EQ(aiter_device_column("AMD Instinct MI300X (gfx942)"), "gfx942");
  EXPECT_EQ(aiter_device_column("AMD Instinct MI210 (gfx90a)"), "gfx90a");
  EXPECT_EQ(aiter_device_column("NVIDIA H100 80GB HBM3"), "NVIDIA H100 80GB HBM3");
}

TEST(AiterExport, OkRowsInAiterColumnsReadBackByTheAiterReader) {
  const std::vector<ProfileRow> rows = {row(64, 7168, 2048, 20.0, "fp8/128x128_splitk4_x", kStatusOk),
                                        row(1, 7168, 2048, 8.0, "fp8/64x128", kStatusOk),
                                        row(2, 7168, 2048, 9.0, "fp8/64x128", kStatusNumericalFail),
                                        row(1, 512, 7168, 5.0, "fp8/64x128", kStatusOk)};
  const csv::Table table = csv::parse(aiter_table(rows, 304), "aiter.csv");
  EXPECT_EQ(table.header, (std::vector<std::string>{"gfx", "cu_num", "M", "N", "K", "libtype", "kernelId", "splitK",
                                                    "us", "kernelName", "tflops", "bw", "errRatio"}));
  ASSERT_EQ(table.rows.size(), 3u);  // the failed point has no tuned entry
  // Ordered by N, K, M; kernel ids in first-seen order; split-K from the launch name.
  EXPECT_EQ(table.rows[0][table.column("N")], "512");
  EXPECT_EQ(table.rows[1][table.column("M")], "1");
  EXPECT_EQ(table.rows[2][table.column("M")], "64");
  EXPECT_EQ(table.rows[0][table.column("kernelId")], "0");
  EXPECT_EQ(table.rows[2][table.column("kernelId")], "1");
  EXPECT_EQ(table.rows[1][table.column("splitK")], "0");
  EXPECT_EQ(table.rows[2][table.column("splitK")], "4");
  EXPECT_EQ(table.rows[2][table.column("gfx")], "gfx942");
  EXPECT_EQ(table.rows[2][table.column("cu_num")], "304");
  EXPECT_EQ(table.rows[2][table.column("libtype")], "hip_fp8_blockscale");

  const std::vector<analyze::Series> series = analyze::read_aiter_csv(table, "ours.csv", analyze::ReadOptions{});
  ASSERT_EQ(series.size(), 2u);  // one per (gfx, cu_num, N, K)
  EXPECT_EQ(series[0].n, 512);
  ASSERT_EQ(series[1].points.size(), 2u);
  EXPECT_EQ(series[1].points[0].m, 1);
  EXPECT_DOUBLE_EQ(series[1].points[0].time_us, 8.0);
  EXPECT_DOUBLE_EQ(series[1].points[1].time_us, 20.0);
  EXPECT_NEAR(series[1].points[1].tflops, rows[0].tflops, 0.01);
}

class AiterExportCli : public testing_support::ProfileCliTest {};

TEST_F(AiterExportCli, ProfileWritesATableWithTheMeasuredTimes) {
  const fs::path out = scratch("out");
  const testing_support::Outcome outcome = testing_support::run_profile(
      "--model qwen3_4b --module o_proj --tp 8 --backend cpu --threads 2 --kernel cpu_bf16 --m-list 1,3 "
      "--min-samples 2 --warmup 0 --max-seconds-per-point 0 --format aiter --out " + out.string());
  ASSERT_EQ(outcome.exit_code, 0) << outcome.stderr_text;
  const fs::path table_path = out / "cpu_bf16.aiter_tuned_gemm.csv";
  ASSERT_TRUE(fs::exists(table_path)) << outcome.stdout_text;
  EXPECT_NE(outcome.stdout_text.find("aiter -> " + table_path.string()), std::string::npos);

  fs::path profile;
  for (const auto& entry : fs::directory_iterator(out))
    if (entry.path().extension() == ".csv" && entry.path() != table_path) profile = entry.path();
  const csv::Table measured = csv::read_file(profile);
  analyze::ReadOptions options;
  options.peak_tflops_override = 1.0;  // a CPU has no FP8 peak in the device table
  const std::vector<analyze::Series> series = analyze::read_series_file(table_path.string(), options);
  ASSERT_EQ(series.size(), 1u);
  EXPECT_EQ(series[0].format, "aiter");
  ASSERT_EQ(series[0].points.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(series[0].points[i].m, std::stoll(measured.rows[i][measured.column("batch")]));
    EXPECT_NEAR(series[0].points[i].time_us, std::stod(measured.rows[i][measured.column("kernel_time")]),
                1e-4 * std::stod(measured.rows[i][measured.column("kernel_time")]) + 1e-4);
  }
}

TEST_F(AiterExportCli, UnknownFormatAndScaleOutAreUserErrors) {
  testing_support::expect_user_error("--model qwen3_4b --module o_proj --tp 8 --backend cpu --format parquet",
                                     {"--format 'parquet'", "shapescope or aiter"});
  testing_support::expect_user_error(
      "--model qwen3_4b --module o_proj --tp 8 --backend cpu --format aiter --workers 2 --out /tmp/unused",
      {"--format aiter", "single-process", "--workers"});
}

}  // namespace
}  // namespace shapescope::profiler
