// The counters file beside a profile (profile --counters writes it, analyze reads it),
// and explain's use of it.
#include "common/kernel_counters.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "analyze/explain.hpp"
#include "analyze_test_support.hpp"
#include "common/user_error.hpp"

namespace shapescope {
namespace {

KernelCounters sample(int64_t m, double dram_read_bytes) {
  KernelCounters counters;
  counters.m = m;
  counters.duration_us = 42.6;
  counters.dram_read_bytes = dram_read_bytes;
  counters.dram_write_bytes = 4.1e6;
  counters.l2_hit_rate_pct = 38.5;
  counters.achieved_occupancy_pct = 11.9;
  counters.sm_active_pct = 96.25;
  counters.tensor_pipe_pct = std::nan("");  // not collected
  counters.instructions = 1.5e6;
  counters.min_bytes = 6.1e7;
  counters.kernels = {"void cutlass::Kernel<a, b>(Params)", "splitKreduce_kernel"};
  counters.missing = {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"};
  return counters;
}

TEST(KernelCountersFile, NamedBesideTheProfile) {
  EXPECT_EQ(counters_path("out/a_b_tp2_N1_K2_cublaslt_fp8_blockscale_graph.csv"),
            "out/a_b_tp2_N1_K2_cublaslt_fp8_blockscale_graph.counters.csv");
}

TEST(KernelCountersFile, RoundTripsAndMergesByM) {
  const analyze::testing::ScratchDir dir;
  const auto path = dir.path() / "p.counters.csv";
  write_counters_file(path, {sample(144, 9.7e7), sample(240, 6.0e7)});
  write_counters_file(path, {sample(144, 6.2e7), sample(16, 1e7)});  // replaces M=144, adds M=16
  const auto rows = read_counters_file(path);
  ASSERT_EQ(rows.size(), 3u);
  const KernelCounters& row = rows.at(144);
  EXPECT_EQ(row.dram_read_bytes, 6.2e7);
  EXPECT_EQ(rows.at(240).dram_read_bytes, 6.0e7);
  EXPECT_EQ(row.duration_us, 42.6);
  EXPECT_EQ(row.sm_active_pct, 96.25);
  EXPECT_TRUE(std::isnan(row.tensor_pipe_pct));
  EXPECT_EQ(row.kernels, sample(1, 0).kernels);  // commas inside a name survive the CSV
  EXPECT_EQ(row.missing, sample(1, 0).missing);
  EXPECT_EQ(row.min_bytes, 6.1e7);
}

TEST(KernelCountersFile, MalformedFilesNameTheFileAndLine) {
  const analyze::testing::ScratchDir dir;
  const auto wrong_columns = dir.write("a.counters.csv", "m,duration_us\n16,3\n");
  EXPECT_THROW(read_counters_file(wrong_columns), UserError);
  write_counters_file(dir.path() / "b.counters.csv", {sample(16, 1)});
  std::ifstream in(dir.path() / "b.counters.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  const auto bad = dir.write("c.counters.csv", header + "\n" + "16,abc" + row.substr(row.find(',', 3)) + "\n");
  try {
    read_counters_file(bad);
    FAIL() << "no error for a non-number";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("c.counters.csv:2: duration_us 'abc' is not a number"),
              std::string::npos)
        << error.what();
  }
}

// M is an integer: NaN, empty, fractional or past int64's end is refused, never cast from a double.
TEST(KernelCountersFile, AnMThatIsNoPositiveIntegerIsRefused) {
  const analyze::testing::ScratchDir dir;
  write_counters_file(dir.path() / "good.counters.csv", {sample(16, 1)});
  std::ifstream in(dir.path() / "good.counters.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  for (const char* m : {"nan", "", "1.5", "1e300", "9223372036854775808", "0", "-16"}) {
    const auto bad = dir.write("bad.counters.csv", header + "\n" + m + row.substr(row.find(',')) + "\n");
    try {
      read_counters_file(bad);
      ADD_FAILURE() << "no error for m " << m;
    } catch (const UserError& error) {
      EXPECT_NE(std::string(error.what()).find("bad.counters.csv:2: m"), std::string::npos) << error.what();
    }
  }
}

// explain: counters add causes where the profile alone finds none ("same kernel, same waves").
TEST(ExplainWithCounters, AddsCounterCausesAndNamesMissingPoints) {
  analyze::Series series = analyze::testing::make_series({{128, 10}, {144, 20}, {160, 11}});
  for (analyze::SeriesPoint& point : series.points) point.kernel_name = "same_kernel";
  const analyze::Anomaly anomaly = analyze::testing::anomaly_against(series, 1, 0);  // M = 144 against M = 128
  EXPECT_FALSE(analyze::explain_anomaly(series, anomaly).explained());

  KernelCounters reference = sample(128, 6.0e7), here = sample(144, 6.0e7);
  reference.kernels = {"gemm"};
  here.kernels = {"gemm", "splitKreduce_kernel"};
  analyze::CountersByM counters = {{128, reference}, {144, here}};
  const analyze::Explanation explained = analyze::explain_anomaly(series, anomaly, &counters);
  ASSERT_EQ(explained.causes.size(), 1u) << explained.summary();
  EXPECT_EQ(explained.causes[0].kind, analyze::CauseKind::extra_kernel);
  EXPECT_EQ(explained.summary().rfind("extra kernel: split-K reduction (splitKreduce_kernel)", 0), 0u)
      << explained.summary();

  counters.erase(128);
  const analyze::Explanation without_reference = analyze::explain_anomaly(series, anomaly, &counters);
  EXPECT_FALSE(without_reference.explained());
  EXPECT_NE(without_reference.summary().find("no counters for M=128"), std::string::npos) << without_reference.summary();
}

}  // namespace
}  // namespace shapescope
