#include <gtest/gtest.h>

#include <algorithm>

#include "common/user_error.hpp"
#include "profiler/m_sweep.hpp"

namespace shapescope::profiler {
namespace {

TEST(MSweep, FairyspeedIsTheStudysSweep) {
  const auto values = m_preset("fairyspeed");
  ASSERT_EQ(values.size(), 8197u);
  EXPECT_EQ(std::vector<int64_t>(values.begin(), values.begin() + 10),
            (std::vector<int64_t>{1, 2, 4, 6, 8, 10, 12, 14, 16, 20}));
  EXPECT_EQ(values.back(), 32768);
  EXPECT_TRUE(std::is_sorted(values.begin(), values.end()));
}

TEST(MSweep, CudagraphAndLargePresets) {
  const auto graph = m_preset("cudagraph");
  // 1,2,4,8 + 16..512 step 8 (63 values) + 1024, 8192
  ASSERT_EQ(graph.size(), 4u + 63u + 2u);
  EXPECT_EQ(graph[4], 16);
  EXPECT_EQ(graph[5], 24);
  EXPECT_EQ(graph[graph.size() - 3], 512);
  EXPECT_EQ(graph.back(), 8192);
  EXPECT_EQ(m_preset("large"),
            (std::vector<int64_t>{10000, 16384, 20480, 32768, 65536, 128000, 131072, 260000, 262144}));
  EXPECT_EQ(m_preset("cpu").back(), 256);
}

TEST(MSweep, RangesAndListsMergeSortedWithoutDuplicates) {
  MSweepSpec spec;
  spec.preset = "fairyspeed";  // ignored once a range or list is given
  spec.ranges = {"8:16:4"};
  spec.lists = {"3,12,1"};
  EXPECT_EQ(resolve_m_sweep(spec), (std::vector<int64_t>{1, 3, 8, 12, 16}));
  EXPECT_EQ(parse_m_range("5:5:1"), (std::vector<int64_t>{5}));
}

TEST(MSweep, RangesAreCountedBeforeTheyAreBuiltAndNeverOverflow) {
  // The step of the last one overflows int64 when added to START: one value, no endless loop.
  EXPECT_EQ(parse_m_range("9223372036854775806:9223372036854775807:9223372036854775807"),
            (std::vector<int64_t>{9223372036854775806}));
  EXPECT_EQ(parse_m_range("9223372036854775800:9223372036854775807:3"),
            (std::vector<int64_t>{9223372036854775800, 9223372036854775803, 9223372036854775806}));
  for (const char* huge : {"1:1000000000000:1", "1:100000000:1", "1:100001:1"}) {
    MSweepSpec spec;
    spec.ranges = {huge};
    try {
      resolve_m_sweep(spec);
      FAIL() << huge;
    } catch (const UserError& error) {
      EXPECT_NE(std::string(error.what()).find("--allow-large-sweep"), std::string::npos) << error.what();
    }
  }
  MSweepSpec spec;
  spec.ranges = {"1:100000:1"};
  EXPECT_EQ(resolve_m_sweep(spec).size(), 100000u);
  spec.ranges.push_back("200000:200001:1");  // the union counts, not each range
  EXPECT_THROW(resolve_m_sweep(spec), UserError);
  spec.allow_large = true;
  EXPECT_EQ(resolve_m_sweep(spec).size(), 100002u);
  spec.ranges = {"1:1000000000000:1"};  // beyond any sweep, allowed or not
  EXPECT_THROW(resolve_m_sweep(spec), UserError);
}

TEST(MSweep, BadSyntaxNamesTheInput) {
  for (const char* bad : {"1:10", "10:1:1", "0:5:1", "1:5:0", "a:b:c", "1:5:1:2", ""}) {
    try {
      parse_m_range(bad);
      FAIL() << bad;
    } catch (const UserError& error) {
      EXPECT_NE(std::string(error.what()).find("START:STOP:STEP"), std::string::npos);
    }
  }
  EXPECT_THROW(parse_m_list("1,,2"), UserError);
  EXPECT_THROW(parse_m_list("1,-2"), UserError);
  EXPECT_THROW(parse_m_list("1.5"), UserError);
  try {
    m_preset("huge");
    FAIL();
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("cudagraph"), std::string::npos);
  }
}

}  // namespace
}  // namespace shapescope::profiler
