// A folder of shards read as one profile: which planned points no shard holds, the manifest round
// trip, shards of two sweeps refused; and the per-device lock (a busy device waits or stops).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/shard_manifest.hpp"
#include "common/user_error.hpp"
#include "profiler/device_lock.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

class ShardFolder : public ::testing::Test {
 protected:
  fs::path shard(int index, int count, const std::map<std::string, std::vector<int64_t>>& rows) {
    const fs::path folder = dir / shard_folder_name(index, count);
    fs::create_directories(folder);
    ShardManifest manifest;
    manifest.index = index;
    manifest.count = count;
    manifest.plan_files = {"a.csv", "b.csv"};
    manifest.plan_m_values = {1, 2, 4};
    manifest.points = rows;
    write_manifest(folder, manifest);
    for (const auto& [file, m_values] : rows) {
      std::ofstream csv(folder / file);
      csv << "batch,kernel_time,flops,utils,status\n";
      for (int64_t m : m_values) csv << m << ",1,1,0.5,ok\n";
    }
    return folder;
  }
  testing_support::ScratchDir scratch_;
  const fs::path dir = scratch_.path();
};

TEST_F(ShardFolder, ManifestRoundTrip) {
  const fs::path folder = shard(1, 2, {{"a.csv", {2}}});
  const ShardManifest back = read_manifest(folder);
  EXPECT_EQ(back.index, 1);
  EXPECT_EQ(back.count, 2);
  EXPECT_EQ(back.plan_m_values, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(back.points.at("a.csv"), (std::vector<int64_t>{2}));
  EXPECT_FALSE(back.complete);
  EXPECT_TRUE(is_sharded_folder(dir));
  EXPECT_FALSE(is_sharded_folder(folder));
}

TEST_F(ShardFolder, NamesTheMissingPointsAndAbsentShards) {
  shard(0, 3, {{"a.csv", {1, 4}}, {"b.csv", {2}}});
  shard(1, 3, {{"a.csv", {2}}, {"b.csv", {1}}});
  const ShardedProfile profile = read_sharded_profile(dir);
  EXPECT_EQ(profile.count, 3);
  EXPECT_EQ(profile.shards_absent, (std::vector<int>{2}));
  EXPECT_TRUE(profile.missing.at("a.csv").empty());
  EXPECT_EQ(profile.missing.at("b.csv"), (std::vector<int64_t>{4}));
  EXPECT_EQ(profile.missing_points(), 1);
  EXPECT_EQ(profile.csvs.at("a.csv").size(), 2u);
  const std::string summary = profile.missing_summary();
  EXPECT_NE(summary.find("1 of 6 points missing"), std::string::npos) << summary;
  EXPECT_NE(summary.find("never started: 2"), std::string::npos) << summary;
  EXPECT_NE(summary.find("b.csv M=4"), std::string::npos) << summary;
  shard(2, 3, {{"b.csv", {4}}});
  EXPECT_EQ(read_sharded_profile(dir).missing_points(), 0);
  EXPECT_NE(read_sharded_profile(dir).missing_summary().find("complete (6 points in 3 shards)"), std::string::npos);
}

TEST_F(ShardFolder, ShardsOfTwoSweepsAreRefused) {
  shard(0, 2, {{"a.csv", {1}}});
  shard(1, 3, {{"a.csv", {2}}});
  EXPECT_THROW(read_sharded_profile(dir), UserError);
  EXPECT_THROW(read_sharded_profile(dir / "nothing"), UserError);
}

TEST_F(ShardFolder, BusyDeviceWaitsOrStops) {
  using profiler::BusyPolicy;
  std::optional<FileLock> first = profiler::hold_device("GPU-test", "GPU 0", BusyPolicy::stop, dir);
  ASSERT_TRUE(first);
  try {
    profiler::hold_device("GPU-test", "GPU 0", BusyPolicy::stop, dir);
    FAIL() << "a busy device was taken twice";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("GPU 0 is being measured by process " + std::to_string(::getpid())),
              std::string::npos)
        << error.what();
  }
  EXPECT_TRUE(profiler::hold_device("GPU-other", "GPU 1", BusyPolicy::stop, dir));  // another device is free
  first.reset();
  EXPECT_TRUE(profiler::hold_device("GPU-test", "GPU 0", BusyPolicy::wait, dir));
  EXPECT_THROW(profiler::parse_busy_policy("never"), UserError);
}

}  // namespace
}  // namespace shapescope
