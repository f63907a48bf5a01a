#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "analyze/series.hpp"
#include "analyze/series_finalize.hpp"
#include "analyze_test_support.hpp"
#include "common/csv.hpp"
#include "common/profile_schema.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {
namespace {

using testing::ScratchDir;

std::string error_of(const std::filesystem::path& file, const ReadOptions& options = {}) {
  try {
    read_series_file(file.string(), options);
  } catch (const UserError& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(Readers, StudyProfileCarriesShapeDeviceAndDtypeFromItsName) {
  const std::vector<Series> all = read_series_file(testing::fairyspeed(testing::kRtx4090Torch251).string(), {});
  ASSERT_EQ(all.size(), 1u);
  const Series& series = all[0];
  EXPECT_EQ(series.format, "study");
  EXPECT_EQ(series.points.size(), 8197u);
  EXPECT_EQ(series.n, 14336);
  EXPECT_EQ(series.k, 4096);
  EXPECT_EQ(series.device, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(series.dtype, "float16");
  EXPECT_EQ(series.kernel, "torchgemm");
  EXPECT_NEAR(series.peak_tflops, 166, 0.5);  // the study's stated 4090 peak
  EXPECT_EQ(series.points.front().m, 1);
  EXPECT_EQ(series.points.back().m, 32768);
  EXPECT_NE(series.points.front().kernel_name.find("gemvx"), std::string::npos);  // quoted, with commas
}

TEST(Readers, MarlinProfileWithoutKernelNameReads) {
  const auto all = read_series_file(
      testing::fairyspeed("Marlin_NVIDIA_A800_80GB_PCIe_vllm_0.6.5_K4096_N28672_dtype_gptq_int8.csv").string(), {});
  EXPECT_EQ(all[0].points.size(), 2053u);
  EXPECT_EQ(all[0].dtype, "gptq_int8");
  EXPECT_EQ(all[0].n, 28672);
}

TEST(Readers, AiterTableSplitsIntoOneSeriesPerDeviceAndShape) {
  const std::filesystem::path file = testing::data() / "aiter" / "a8w8_blockscale_tuned_gemm_ds_v3.csv";
  const csv::Table table = csv::read_file(file);
  std::set<std::tuple<std::string, std::string, std::string, std::string>> keys;
  std::set<std::tuple<std::string, std::string, std::string, std::string, std::string>> points;
  for (const auto& row : table.rows) {
    keys.emplace(row[0], row[1], row[3], row[4]);
    points.emplace(row[0], row[1], row[2], row[3], row[4]);
  }
  const std::vector<Series> all = read_series_file(file.string(), {});
  ASSERT_EQ(all.size(), keys.size());
  std::size_t total_points = 0, total_duplicates = 0;
  for (const Series& series : all) {
    total_points += series.points.size();
    for (const DuplicateM& duplicate : series.duplicates) total_duplicates += duplicate.count - 1;
    EXPECT_EQ(series.format, "aiter");
    EXPECT_GT(series.peak_tflops, 0);
    for (const SeriesPoint& point : series.points) EXPECT_DOUBLE_EQ(point.utils, point.tflops / series.peak_tflops);
  }
  EXPECT_EQ(total_points, points.size());
  EXPECT_EQ(total_points + total_duplicates, table.rows.size());
}

TEST(Readers, AiterPeakScalesWithTheCuCountAndCanBeOverridden) {
  ScratchDir dir;
  const auto file = dir.write("t.csv",
                              "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n"
                              "gfx942,304,16,512,7168,ck,1,0,10.0,k,10.0,1,0\n"
                              "gfx942,80,16,512,7168,ck,1,0,10.0,k,10.0,1,0\n");
  const auto all = read_series_file(file.string(), {});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_NEAR(all[0].peak_tflops / all[1].peak_tflops, 304.0 / 80.0, 1e-12);
  ReadOptions options;
  options.peak_tflops_override = 1000;
  EXPECT_DOUBLE_EQ(read_series_file(file.string(), options)[1].points[0].utils, 0.01);
}

TEST(Readers, AiterWithAnUnknownDeviceAsksForThePeak) {
  ScratchDir dir;
  const auto file = dir.write("t.csv",
                              "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n"
                              "gfx1234,60,16,512,7168,ck,1,0,10.0,k,10.0,1,0\n");
  EXPECT_NE(error_of(file).find("--peak-tflops"), std::string::npos);
  ReadOptions options;
  options.peak_tflops_override = 100;
  EXPECT_NO_THROW(read_series_file(file.string(), options));
}

TEST(Readers, UnsortedDuplicatesAreOrderedReportedAndResolved) {
  ScratchDir dir;
  const auto file = dir.write("dups.csv",
                              "batch,kernel_time,flops,utils\n"
                              "8,30,1,0.3\n"
                              "4,20,1,0.2\n"
                              "8,10,1,0.1\n"
                              "8,20,1,0.2\n"
                              "2,5,1,0.5\n");
  const auto kept_time = [&](Dedup dedup) {
    ReadOptions options;
    options.dedup = dedup;
    const Series series = read_series_file(file.string(), options)[0];
    EXPECT_EQ(series.points.size(), 3u);
    EXPECT_EQ(series.points[0].m, 2);
    EXPECT_EQ(series.points[1].m, 4);
    EXPECT_EQ(series.duplicates.size(), 1u);
    EXPECT_EQ(series.duplicates[0].count, 3);
    EXPECT_EQ(series.duplicates[0].kept_time_us, series.points[2].time_us);
    return series.points[2].time_us;
  };
  EXPECT_EQ(kept_time(Dedup::first), 30);
  EXPECT_EQ(kept_time(Dedup::fastest), 10);
  EXPECT_EQ(kept_time(Dedup::median), 20);
}

std::string profile_csv(const std::vector<ProfileRow>& rows) {
  std::string text = csv::format_row(profile_columns());
  for (const ProfileRow& row : rows) text += csv::format_row(to_fields(row));
  return text;
}

ProfileRow profile_row(int64_t m, double time_us, const std::string& status) {
  ProfileRow row;
  row.batch = row.m = m;
  row.kernel_time_us = time_us;
  row.tflops = 2.0 * static_cast<double>(m) * 4096 * 512 / (time_us * 1e6);
  row.utils = row.tflops / 1000;
  row.kernel_name = "tile_128x128";
  row.n = 4096;
  row.k = 512;
  row.dtype = "fp8";
  row.kernel = "fp8_blockscale";
  row.device = "NVIDIA H200";
  row.peak_tflops = 1000;
  row.time_us_stddev = 0.5;
  row.status = status;
  return row;
}

TEST(Readers, ShapescopeTileColumnsReachThePointsAndOldProfilesHaveNone) {
  ScratchDir dir;
  ProfileRow configured = profile_row(16, 10, kStatusOk);
  configured.tile_m = 64;
  configured.tile_n = 256;
  configured.split_k = 2;
  const ProfileRow unrecorded = profile_row(32, 12, kStatusOk);  // 0: the kernel did not say
  const auto file = dir.write("tiles.csv", profile_csv({configured, unrecorded}));
  const Series series = read_series_file(file.string(), {}).at(0);
  ASSERT_EQ(series.points.size(), 2u);
  EXPECT_EQ(series.points[0].tile, (TileShape{64, 256}));
  EXPECT_EQ(series.points[0].split_k, 2);
  EXPECT_FALSE(series.points[1].tile.has_value());
  EXPECT_EQ(series.points[1].split_k, 1);
  // A profile written before the columns existed reads as before.
  const auto old =
      dir.write("old.csv", "batch,kernel_time,flops,utils,kernel_name,status\n8,10,1,0.5,tile_128x128,ok\n");
  const Series old_series = read_series_file(old.string(), {}).at(0);
  EXPECT_EQ(old_series.format, "shapescope");
  EXPECT_FALSE(old_series.points.at(0).tile.has_value());
}

TEST(Readers, ShapescopeProfileSetsFailedRowsAsideAndReadsItsSidecar) {
  ScratchDir dir;
  const auto file = dir.write("llama3_8b_o_proj_tp1_N4096_K512_fp8_blockscale.csv",
                              profile_csv({profile_row(16, 10, kStatusOk), profile_row(8, 0, kStatusNumericalFail),
                                           profile_row(32, 12, kStatusThrottled),
                                           profile_row(64, 0, kStatusSkippedOom)}));
  dir.write("llama3_8b_o_proj_tp1_N4096_K512_fp8_blockscale.json",
            R"({"device": {"name": "NVIDIA H200", "multiprocessors": 132}, "cpu_model": "x", "problem": {"model": "llama3_8b", "module": "o_proj", "tp": 1}})");
  const auto all = read_series_file(file.string(), {});
  ASSERT_EQ(all.size(), 1u);
  const Series& series = all[0];
  EXPECT_EQ(series.format, "shapescope");
  ASSERT_EQ(series.points.size(), 2u);
  EXPECT_FALSE(series.points[0].throttled);
  EXPECT_TRUE(series.points[1].throttled);
  EXPECT_DOUBLE_EQ(series.points[0].stddev_us, 0.5);
  ASSERT_EQ(series.excluded.size(), 2u);
  EXPECT_EQ(series.excluded[0].status, kStatusNumericalFail);
  EXPECT_EQ(series.excluded[1].status, kStatusSkippedOom);
  EXPECT_EQ(series.multiprocessors, 132);
  EXPECT_EQ(series.model, "llama3_8b");
  EXPECT_EQ(series.module, "o_proj");
  EXPECT_EQ(series.n, 4096);
  EXPECT_EQ(series.kernel, "fp8_blockscale");
}

TEST(Readers, ImplausibleRowsAreExcludedWithANote) {
  ScratchDir dir;
  const auto file = dir.write("absurd.csv",
                              "batch,kernel_time,flops,utils\n1,10,1,0.5\n2,10,2,1e20\n3,1e-300,3,0.5\n4,10,4,-0.5\n"
                              "5,10,-4,0.5\n6,12,6,0.6\n");
  const Series series = read_series_file(file.string(), {}).at(0);
  ASSERT_EQ(series.points.size(), 2u);
  EXPECT_EQ(series.points[0].m, 1);
  EXPECT_EQ(series.points[1].m, 6);
  ASSERT_EQ(series.excluded.size(), 4u);
  for (const SeriesPoint& point : series.excluded) EXPECT_EQ(point.status, kStatusImplausible) << point.m;
  EXPECT_EQ(series.excluded[0].note, "MFU 1e+20 outside 0..2");
  EXPECT_EQ(series.excluded[1].note, "time 1e-300 us below 0.001 us");
  EXPECT_EQ(series.excluded[2].note, "MFU -0.5 outside 0..2");
  EXPECT_EQ(series.excluded[3].note, "negative TFLOP/s -4");
}

TEST(Readers, BadInputNamesTheFileLineAndTheFix) {
  ScratchDir dir;
  EXPECT_NE(error_of(dir.write("q.csv", "batch,kernel_time,flops,utils\n1,\"2,3,4\n")).find("q.csv:2"),
            std::string::npos);
  for (const char* bad_time : {"nan", "0", "-3", "abc", "inf"}) {
    const std::string message =
        error_of(dir.write("t.csv", std::string("batch,kernel_time,flops,utils\n1,1,1,1\n2,") + bad_time + ",1,1\n"));
    EXPECT_NE(message.find("t.csv:3"), std::string::npos) << bad_time << ": " << message;
    EXPECT_NE(message.find("kernel_time"), std::string::npos) << message;
  }
  EXPECT_NE(error_of(dir.write("z.csv", "batch,kernel_time,flops,utils\n1,1,1,1\n0,1,1,1\n")).find("z.csv:3: M is 0"),
            std::string::npos);
  const std::string missing = error_of(dir.write("m.csv", "batch,kernel_time,flops\n1,2,3\n"));
  EXPECT_NE(missing.find("utils"), std::string::npos) << missing;
  EXPECT_NE(missing.find("study"), std::string::npos) << missing;
  EXPECT_NE(missing.find("aiter"), std::string::npos) << missing;
  EXPECT_NE(missing.find("shapescope"), std::string::npos) << missing;
  EXPECT_NE(error_of(dir.write("h.csv", "batch,kernel_time,flops,utils\n")).find("no rows"), std::string::npos);
  EXPECT_NE(error_of(dir.path() / "absent.csv").find("no such file"), std::string::npos);
  const auto all_failed = dir.write("f.csv", profile_csv({profile_row(8, 0, kStatusError)}));
  EXPECT_NE(error_of(all_failed).find("no usable rows"), std::string::npos);
}

}  // namespace
}  // namespace shapescope::analyze
