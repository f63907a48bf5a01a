#include "profiler/probed_clock.hpp"

#include <vector>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "analyze/analysis.hpp"
#include "analyze/explain.hpp"
#include "analyze/readers.hpp"
#include "analyze/regions.hpp"
#include "common/profile_schema.hpp"
#include "analyze_test_support.hpp"
#include "scratch_dir.hpp"

namespace shapescope {
namespace {

using analyze::testing::dip_profile;
using profiler::summarize_probes;

TEST(ProbedClock, TheLowestAndTheMeanOfTheProbes) {
  const std::vector<double> probes = {1980, 1980, 1185, 1980};
  const auto summary = summarize_probes(probes);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->probes, 4);
  EXPECT_DOUBLE_EQ(summary->lowest_mhz, 1185);
  EXPECT_DOUBLE_EQ(summary->mean_mhz, (3 * 1980.0 + 1185) / 4);
  EXPECT_FALSE(summarize_probes({}));
}

TEST(ProbedClock, TheColumnsAreWrittenEmptyWhenAbsentAndReadBack) {
  ProfileRow row;
  row.batch = row.m = 128;
  row.kernel_time_us = 100;
  const auto& columns = profile_columns();
  const auto at = [&](const std::vector<std::string>& fields, const std::string& name) {
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (columns[i] == name) return fields[i];
    ADD_FAILURE() << "no column " << name;
    return std::string();
  };
  EXPECT_EQ(at(to_fields(row), "sm_clock_sampled_mean_mhz"), "");
  row.sm_clock_sampled_min_mhz = 1200;
  row.sm_clock_sampled_mean_mhz = 1387.5;
  const std::vector<std::string> fields = to_fields(row);
  EXPECT_EQ(at(fields, "sm_clock_sampled_min_mhz"), "1200");
  const ProfileRow read = parse_profile_row(columns, fields, "test");
  EXPECT_EQ(read.sm_clock_sampled_min_mhz, 1200);
  EXPECT_EQ(read.sm_clock_sampled_mean_mhz, 1387.5);
}

// The dip profile with start and end clocks of 1425 MHz everywhere; `dip_mean_mhz`: the sampled mean clock at the
// dip (1425 elsewhere); 0: a profile without the sampled columns.
std::string clock_dip_profile(double dip_mean_mhz) {
  if (dip_mean_mhz <= 0) return dip_profile(",sm_clock_mhz,sm_clock_end_mhz", [](bool) { return std::string(",1425,1425"); });
  return dip_profile(",sm_clock_mhz,sm_clock_end_mhz,sm_clock_sampled_min_mhz,sm_clock_sampled_mean_mhz",
                     [dip_mean_mhz](bool dip) {
                       const double mean = dip ? dip_mean_mhz : 1425;
                       return fmt::format(",1425,1425,{},{}", mean - 50, mean);
                     });
}

analyze::Region only_region(const testing_support::ScratchDir& dir, const std::string& name, double dip_mean_mhz) {
  using namespace analyze;
  const Series series = read_series_file(dir.write(name, clock_dip_profile(dip_mean_mhz)).string(), {}).at(0);
  const SeriesAnalysis analysis = analyze_series(series, AnalysisOptions{}, MWeights());
  EXPECT_EQ(analysis.findings.size(), 2u) << name;
  const std::vector<Region> regions = find_regions(analysis, RegionInputs{});
  EXPECT_EQ(regions.size(), 1u) << name;
  return regions.empty() ? Region{} : regions.front();
}

TEST(ProbedClock, ADipWhoseSampledClockFellIsThrottlingOnlyWhereTheSampledClockSaysSo) {
  const testing_support::ScratchDir dir;
  // 1150 MHz over the dip's samples vs 1425: 19.3% slower, almost all of its 20% drop.
  const analyze::Region throttled = only_region(dir, "throttled.csv", 1150);
  ASSERT_TRUE(throttled.cause) << analyze::describe_cause(throttled);
  EXPECT_EQ(throttled.cause->kind, analyze::CauseKind::throttling);
  EXPECT_NE(throttled.cause->evidence.find("mean SM clock over the samples 1150 MHz at M=1200 vs 1425 MHz at M="),
            std::string::npos)
      << throttled.cause->evidence;
  EXPECT_NE(throttled.cause->evidence.find("19.3% slower, 20.0% of the MFU lost"), std::string::npos)
      << throttled.cause->evidence;
  // 1350 MHz: 5.3% slower, less than half the drop; the kernel itself was slower there.
  const analyze::Region own = only_region(dir, "own.csv", 1350);
  EXPECT_FALSE(own.cause) << analyze::describe_cause(own);
  EXPECT_NE(
      analyze::describe_cause(own).find("not flagged as throttled, mean SM clock over the samples 1350 vs 1425 MHz"),
      std::string::npos)
      << analyze::describe_cause(own);
  // Without the columns the endpoint clocks (equal everywhere) decide, as before: no cause.
  const analyze::Region old = only_region(dir, "old.csv", 0);
  EXPECT_FALSE(old.cause) << analyze::describe_cause(old);
  EXPECT_NE(analyze::describe_cause(old).find("not flagged as throttled, SM clock 1425 vs 1425 MHz"), std::string::npos)
      << analyze::describe_cause(old);
}

}  // namespace
}  // namespace shapescope
