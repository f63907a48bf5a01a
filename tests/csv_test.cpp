#include "common/csv.hpp"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/user_error.hpp"
#include "test_data.hpp"

namespace shapescope::csv {
namespace {

TEST(Csv, RoundTripsNastyKernelNames) {
  const std::vector<std::vector<std::string>> rows = {
      {"1", "std::enable_if<!(false), void>::type gemvx<long, long, __half>", "plain"},
      {"2", "say \"hi\", then \"\"leave\"\"", "line one\nline two\r\nline three"},
      {"3", "", " leading and trailing spaces "},
      {"4", "\"", ","},
  };
  std::string text = format_row({"batch", "kernel_name", "note"});
  for (const auto& row : rows) text += format_row(row);

  const Table table = parse(text, "nasty.csv");
  EXPECT_EQ(table.header, (std::vector<std::string>{"batch", "kernel_name", "note"}));
  EXPECT_EQ(table.rows, rows);
}

TEST(Csv, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(quote("cutlass_80_tensorop_gemm"), "cutlass_80_tensorop_gemm");
  EXPECT_EQ(quote("a,b"), "\"a,b\"");
  EXPECT_EQ(quote("say \"x\""), "\"say \"\"x\"\"\"");
  EXPECT_EQ(quote(" padded"), "\" padded\"");
  EXPECT_EQ(format_row({"a", "b,c", ""}), "a,\"b,c\",\n");
}

TEST(Csv, ToleratesBomCrlfAndTrailingNewlines) {
  const Table table = parse("\xEF\xBB\xBF" "batch,kernel_time\r\n1,2.5\r\n\r\n4,\"3\"\r\n\n\n", "crlf.csv");
  EXPECT_EQ(table.header, (std::vector<std::string>{"batch", "kernel_time"}));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"1", "2.5"}));
  EXPECT_EQ(table.rows[1], (std::vector<std::string>{"4", "3"}));
  EXPECT_EQ(table.column("kernel_time"), 1);
  EXPECT_EQ(table.column("missing"), -1);
}

TEST(Csv, RowLinesCountNewlinesInsideQuotes) {
  const Table table = parse("a,b\n1,\"x\ny\nz\"\n2,w\n", "lines.csv");
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.row_lines[0], 2u);
  EXPECT_EQ(table.row_lines[1], 5u);
}

TEST(Csv, KeepsTrailingEmptyField) {
  const Table table = parse("a,b\n1,\n", "empty.csv");
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"1", ""}));
}

void expect_error(std::string_view text, const std::string& expected_prefix) {
  try {
    parse(text, "bad.csv");
    FAIL() << "no error for: " << text;
  } catch (const UserError& error) {
    EXPECT_EQ(std::string(error.what()).rfind(expected_prefix, 0), 0u) << error.what();
  }
}

TEST(Csv, ReportsMalformedInputWithSourceAndLine) {
  expect_error("a,b\n1,2\n3,\"unterminated\n", "bad.csv:3: unterminated quoted field");
  expect_error("a,b\n1,\"x\"y\n", "bad.csv:2: text after a closing quote");
  expect_error("a,b\n1,2\n1,2,3\n", "bad.csv:3: 3 fields but the header has 2");
  expect_error("", "bad.csv:1: empty file");
}

TEST(Csv, ReadsTheStudysQuotedKernelNames) {
  const std::filesystem::path study = testing_data::data_dir() / "fairyspeed";
  const Table table = read_file(
      study / "torchgemm_NVIDIA_GeForce_RTX_4090_torch_2.3.0+cu121_K4096_N14336_dtypefloat16.csv");
  EXPECT_EQ(table.header, (std::vector<std::string>{"batch", "kernel_time", "flops", "utils", "kernel_name"}));
  EXPECT_EQ(table.rows.size(), 8197u);
  const std::string& first_kernel = table.rows.front()[4];
  EXPECT_NE(first_kernel.find(", void>::type"), std::string::npos) << first_kernel;
  EXPECT_EQ(table.rows.front()[0], "1");
  EXPECT_EQ(table.rows.back()[0], "32768");
}

TEST(Csv, MissingFileIsAUserError) {
  EXPECT_THROW(read_file("/nonexistent/shapescope/profile.csv"), UserError);
}

}  // namespace
}  // namespace shapescope::csv
