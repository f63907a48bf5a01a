#include "common/profile_schema.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/csv.hpp"
#include "common/user_error.hpp"

namespace shapescope {
namespace {

ProfileRow measured_row() {
  ProfileRow row;
  row.batch = 4096;
  row.kernel_time_us = 1234567.891234;  // over 1e6 µs: %.6g would lose digits
  row.tflops = 0.1 + 0.2;               // not representable in few digits
  row.utils = 1.0 / 3.0;
  row.kernel_name = "void gemm<float, \"quoted\", 128>(Params, int), tail";
  row.m = 4096;
  row.n = 14336;
  row.k = 4096;
  row.batch_count = 3;
  row.dtype = "fp8";
  row.kernel = "cpu_w8a8_blockscale";
  row.backend = "cpu";
  row.device = "AMD EPYC 7B13, 2 threads";
  row.peak_tflops = 989.4;
  row.time_us_min = 1.0e-7;
  row.time_us_max = 3.0e12;
  row.time_us_stddev = 12.5;
  row.samples = 25;
  row.gbytes_per_s = 2.0 / 7.0;
  row.rel_err = 1.2345678901234567e-3;
  row.status = kStatusOk;
  row.ci95_us = 0.75;
  row.passes = 2;
  row.sm_clock_mhz = 1980;
  row.sm_clock_end_mhz = 1755;
  row.temperature_c = 61;
  row.power_w = 512.25;
  row.timing = "graph";
  row.operand_sets = 48;
  row.launched = "nvjet_sm90_qqtst_128x128; splitKreduce_kernel";
  row.format = "nvfp4";
  row.note = "line one\nline two";
  return row;
}

TEST(ProfileSchema, StudyColumnsComeFirst) {
  const std::vector<std::string>& columns = profile_columns();
  ASSERT_GE(columns.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(columns.begin(), columns.begin() + 5),
            (std::vector<std::string>{"batch", "kernel_time", "flops", "utils", "kernel_name"}));
  EXPECT_EQ(columns.size(), to_fields(ProfileRow{}).size());
  EXPECT_EQ(columns.back(), "note");
}

TEST(ProfileSchema, ProfilesWithoutATimingColumnWereTimedWithEvents) {
  const csv::Table table = csv::parse("batch,kernel_time,flops,utils\n4,10,1,0.5\n", "old.csv");
  const ProfileRow read = parse_profile_row(table.header, table.rows[0], "old.csv:2");
  EXPECT_EQ(read.timing, "events");
  EXPECT_EQ(read.operand_sets, 1);
}

TEST(ProfileSchema, RowRoundTripsExactlyThroughCsv) {
  const ProfileRow written = measured_row();
  const std::string text = csv::format_row(profile_columns()) + csv::format_row(to_fields(written));
  const csv::Table table = csv::parse(text, "roundtrip.csv");
  ASSERT_EQ(table.rows.size(), 1u);
  const ProfileRow read = parse_profile_row(table.header, table.rows[0], "roundtrip.csv:2");
  EXPECT_EQ(read.batch, written.batch);
  EXPECT_EQ(read.kernel_time_us, written.kernel_time_us);
  EXPECT_EQ(read.tflops, written.tflops);
  EXPECT_EQ(read.utils, written.utils);
  EXPECT_EQ(read.kernel_name, written.kernel_name);
  EXPECT_EQ(read.m, written.m);
  EXPECT_EQ(read.n, written.n);
  EXPECT_EQ(read.k, written.k);
  EXPECT_EQ(read.batch_count, written.batch_count);
  EXPECT_EQ(read.dtype, written.dtype);
  EXPECT_EQ(read.kernel, written.kernel);
  EXPECT_EQ(read.backend, written.backend);
  EXPECT_EQ(read.device, written.device);
  EXPECT_EQ(read.peak_tflops, written.peak_tflops);
  EXPECT_EQ(read.time_us_min, written.time_us_min);
  EXPECT_EQ(read.time_us_max, written.time_us_max);
  EXPECT_EQ(read.time_us_stddev, written.time_us_stddev);
  EXPECT_EQ(read.timing, written.timing);
  EXPECT_EQ(read.operand_sets, written.operand_sets);
  EXPECT_EQ(read.launched, written.launched);
  EXPECT_EQ(read.samples, written.samples);
  EXPECT_EQ(read.gbytes_per_s, written.gbytes_per_s);
  EXPECT_EQ(read.rel_err, written.rel_err);
  EXPECT_EQ(read.status, written.status);
  EXPECT_EQ(read.ci95_us, written.ci95_us);
  EXPECT_EQ(read.passes, written.passes);
  EXPECT_EQ(read.sm_clock_mhz, written.sm_clock_mhz);
  EXPECT_EQ(read.sm_clock_end_mhz, written.sm_clock_end_mhz);
  EXPECT_EQ(read.temperature_c, written.temperature_c);
  EXPECT_EQ(read.power_w, written.power_w);
  EXPECT_EQ(read.format, written.format);
  EXPECT_EQ(read.note, written.note);
}

TEST(ProfileSchema, TheKernelConfigurationRoundTripsAndOldProfilesReadWithoutIt) {
  ProfileRow written = measured_row();
  written.tile_m = 64;
  written.tile_n = 256;
  written.cluster_m = 1;
  written.cluster_n = 2;
  written.cluster_k = 1;
  written.split_k = 3;
  const csv::Table table =
      csv::parse(csv::format_row(profile_columns()) + csv::format_row(to_fields(written)), "config.csv");
  const ProfileRow read = parse_profile_row(table.header, table.rows[0], "config.csv:2");
  EXPECT_EQ(read.tile_m, 64);
  EXPECT_EQ(read.tile_n, 256);
  EXPECT_EQ(read.cluster_m, 1);
  EXPECT_EQ(read.cluster_n, 2);
  EXPECT_EQ(read.cluster_k, 1);
  EXPECT_EQ(read.split_k, 3);
  // A profile written before the columns: the configuration is unknown (0), the row still reads.
  const csv::Table old = csv::parse("batch,kernel_time,flops,utils,kernel_name,status,note\n4,10,1,0.5,k,ok,\n",
                                    "old.csv");
  const ProfileRow unknown = parse_profile_row(old.header, old.rows[0], "old.csv:2");
  EXPECT_EQ(unknown.tile_m, 0);
  EXPECT_EQ(unknown.tile_n, 0);
  EXPECT_EQ(unknown.split_k, 0);
}

TEST(ProfileSchema, ThePowerCapColumnsRoundTripEmptyWhenUnknownAndOldProfilesReadWithoutThem) {
  const auto field_of = [](const std::vector<std::string>& fields, const std::string& column) {
    const auto at = std::find(profile_columns().begin(), profile_columns().end(), column);
    return fields.at(std::size_t(at - profile_columns().begin()));
  };
  EXPECT_EQ(field_of(to_fields(measured_row()), "power_capped_pct"), "");  // unknown: empty
  ProfileRow written = measured_row();
  written.power_capped_pct = 0.0;  // measured, never capped: not the same as unknown
  written.power_limit_w = 700;
  const std::vector<std::string> fields = to_fields(written);
  EXPECT_EQ(field_of(fields, "power_capped_pct"), "0");
  EXPECT_EQ(field_of(fields, "power_limit_w"), "700");
  const csv::Table table = csv::parse(csv::format_row(profile_columns()) + csv::format_row(fields), "cap.csv");
  const ProfileRow read = parse_profile_row(table.header, table.rows[0], "cap.csv:2");
  EXPECT_EQ(read.power_capped_pct, std::optional<double>(0.0));
  EXPECT_EQ(read.power_limit_w, std::optional<double>(700.0));
  // Written before the columns, and a study file: unknown.
  const csv::Table old = csv::parse("batch,kernel_time,flops,utils,kernel_name,status,power_w\n4,10,1,0.5,k,ok,650\n",
                                    "old.csv");
  const ProfileRow before = parse_profile_row(old.header, old.rows[0], "old.csv:2");
  EXPECT_FALSE(before.power_capped_pct);
  EXPECT_FALSE(before.power_limit_w);
  EXPECT_EQ(before.power_w, 650);
  // A value that is no number names the column.
  const csv::Table bad = csv::parse("batch,kernel_time,flops,utils,power_capped_pct\n4,10,1,0.5,most\n", "bad.csv");
  try {
    parse_profile_row(bad.header, bad.rows[0], "bad.csv:2");
    FAIL() << "no error";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("column 'power_capped_pct' holds 'most'"), std::string::npos)
        << error.what();
  }
}

TEST(ProfileSchema, ReadsStudyRowsWithDefaults) {
  const std::vector<std::string> header = {"batch", "kernel_time", "flops", "utils", "kernel_name"};
  const ProfileRow row = parse_profile_row(header, {"16", "128.8", "58.4", "0.35181", "cutlass_gemm"}, "study.csv:9");
  EXPECT_EQ(row.batch, 16);
  EXPECT_EQ(row.m, 16);
  EXPECT_DOUBLE_EQ(row.kernel_time_us, 128.8);
  EXPECT_DOUBLE_EQ(row.utils, 0.35181);
  EXPECT_EQ(row.kernel_name, "cutlass_gemm");
  EXPECT_EQ(row.status, kStatusOk);
  EXPECT_EQ(row.batch_count, 1);
  EXPECT_EQ(row.passes, 1);
}

TEST(ProfileSchema, ReadsTheStudysMarlinRowsWithoutKernelName) {
  const ProfileRow row =
      parse_profile_row({"batch", "kernel_time", "flops", "utils"}, {"1", "80.84", "2.91", "0.00933"}, "marlin.csv:2");
  EXPECT_EQ(row.batch, 1);
  EXPECT_TRUE(row.kernel_name.empty());
}

void expect_error(const std::vector<std::string>& header, const std::vector<std::string>& fields,
                  const std::string& expected_fragment) {
  try {
    parse_profile_row(header, fields, "p.csv:7");
    FAIL() << "no error, expected: " << expected_fragment;
  } catch (const UserError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("p.csv:7: ", 0), 0u) << message;
    EXPECT_NE(message.find(expected_fragment), std::string::npos) << message;
  }
}

TEST(ProfileSchema, RejectsBadRequiredValues) {
  const std::vector<std::string> header = {"batch", "kernel_time", "flops", "utils", "kernel_name", "status"};
  expect_error(header, {"16", "nan", "1", "0.1", "k", "ok"}, "kernel_time");
  expect_error(header, {"16", "-3", "1", "0.1", "k", "ok"}, "kernel_time");
  expect_error(header, {"16", "0", "1", "0.1", "k", ""}, "kernel_time");
  expect_error(header, {"16", "12us", "1", "0.1", "k", "ok"}, "'12us', not a number");
  expect_error(header, {"x", "12", "1", "0.1", "k", "ok"}, "column 'batch'");
  expect_error(header, {"0", "12", "1", "0.1", "k", "ok"}, "batch is 0");
  expect_error({"batch", "flops", "utils"}, {"1", "1", "0.1"}, "missing column 'kernel_time'");
}

TEST(ProfileSchema, EveryMeasuredStatusNeedsATime) {
  EXPECT_TRUE(is_measured_status(kStatusOk));
  EXPECT_TRUE(is_measured_status(kStatusThrottled));
  for (const char* status : {kStatusNumericalFail, kStatusError, kStatusSkippedOom, kStatusUnsupported, kStatusNoRows})
    EXPECT_FALSE(is_measured_status(status)) << status;
  const std::vector<std::string> header = {"batch", "kernel_time", "flops", "utils", "kernel_name", "status"};
  expect_error(header, {"16", "0", "1", "0.1", "k", kStatusThrottled}, "kernel_time is 0 on a row with status throttled");
}

TEST(ProfileSchema, SkippedPointsMayHaveNoTime) {
  const std::vector<std::string> header = {"batch", "kernel_time", "flops", "utils", "kernel_name", "status", "note"};
  const ProfileRow row =
      parse_profile_row(header, {"262144", "nan", "0", "0", "", kStatusSkippedOom, "needs 96 GiB"}, "p.csv:3");
  EXPECT_EQ(row.status, kStatusSkippedOom);
  EXPECT_TRUE(std::isnan(row.kernel_time_us));
  EXPECT_EQ(row.note, "needs 96 GiB");
}

}  // namespace
}  // namespace shapescope
