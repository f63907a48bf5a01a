// `profile --merge` on a folder of shards: every file's rows from all its shards in one CSV at the top, files
// merged side by side and reported in name order, and shards that measured one file differently refused.
#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/shard_manifest.hpp"
#include "common/user_error.hpp"
#include "profiler/profile_csv.hpp"
#include "profiler/sharded_sweep.hpp"
#include "profiler/sidecar.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope::profiler {
namespace {

namespace fs = std::filesystem;

class ShardMerge : public ::testing::Test {
 protected:
  // Shard `index` of 2 of a plan of `files` x M {1, 2}: shard 0 measured M=1 of every file, shard 1 M=2,
  // each file with the fingerprint `cache`.
  void shard(int index, const std::vector<std::string>& files, const std::string& cache) {
    const fs::path folder = dir / shard_folder_name(index, 2);
    fs::create_directories(folder);
    ShardManifest manifest;
    manifest.index = index;
    manifest.count = 2;
    manifest.plan_files = files;
    manifest.plan_m_values = {1, 2};
    manifest.complete = true;
    for (const std::string& file : files) {
      manifest.points[file] = {index + 1};
      ProfileRow row;
      row.batch = row.m = index + 1;
      row.kernel_time_us = 10;
      row.tflops = 1;
      row.peak_tflops = 10 / double(index + 1);
      row.utils = row.tflops / row.peak_tflops;
      row.samples = 5;
      row.status = "ok";
      write_profile_csv(folder / file, {row});
      write_file_atomically(sidecar_path(folder / file),
                            nlohmann::json{{"measurement_fingerprint", {{"cache", cache}}}}.dump());
    }
    write_manifest(folder, manifest);
  }
  testing_support::ScratchDir scratch;
  const fs::path dir = scratch.path();
};

TEST_F(ShardMerge, EveryFileGetsTheRowsOfAllItsShardsInNameOrder) {
  std::vector<std::string> files;
  for (int i = 0; i < 20; ++i) files.push_back(fmt::format("file{:02}.csv", i));  // more files than merge threads
  shard(0, files, "cold");
  shard(1, files, "cold");
  const MergeResult merged = merge_shards(dir);
  EXPECT_EQ(merged.shards.missing_points(), 0);
  ASSERT_EQ(merged.files.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(merged.written[i], dir / files[i]);
    EXPECT_EQ(merged.files[i].csv, dir / files[i]);
    EXPECT_EQ(merged.files[i].points, 2);
    EXPECT_EQ(merged.files[i].best_m, 2);
    EXPECT_EQ(read_profile_csv(dir / files[i]).size(), 2u);
    EXPECT_EQ(read_sidecar(dir / files[i])->at("shards").size(), 2u);
  }
}

TEST_F(ShardMerge, ShardsThatMeasuredAFileDifferentlyAreRefused) {
  shard(0, {"a.csv", "b.csv"}, "cold");
  shard(1, {"a.csv", "b.csv"}, "hot");
  try {
    merge_shards(dir);
    FAIL() << "merged shards of different fingerprints";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("a.csv: shard-0-of-2 and shard-1-of-2 measured it differently"),
              std::string::npos)
        << error.what();
  }
}

// A shard's CSV edited by hand (or by a run of another sweep) must not slip into the merge: a row of another
// shard's M once replaced that shard's measurement, an M outside the plan was added, an unreadable status kept.
TEST_F(ShardMerge, RowsTheShardsPlanDoesNotHoldAreRefusedNamingFileMAndReason) {
  auto refused_for = [&](const ProfileRow& extra) {
    shard(0, {"a.csv"}, "cold");
    shard(1, {"a.csv"}, "cold");
    std::vector<ProfileRow> rows = read_profile_csv(dir / "shard-1-of-2" / "a.csv");
    rows.push_back(extra);
    write_profile_csv(dir / "shard-1-of-2" / "a.csv", rows);
    try {
      merge_shards(dir);
    } catch (const UserError& error) {
      return std::string(error.what());
    }
    return std::string("merged");
  };
  ProfileRow foreign;
  foreign.batch = foreign.m = 1;  // shard 0's point
  foreign.kernel_time_us = 999.5;
  const std::string other_shard = refused_for(foreign);
  EXPECT_NE(other_shard.find("shard-1-of-2/a.csv: M=1 belongs to another shard"), std::string::npos) << other_shard;
  ProfileRow outside = foreign;
  outside.batch = outside.m = 7;
  const std::string off_plan = refused_for(outside);
  EXPECT_NE(off_plan.find("M=7 is not an M of the sweep's plan"), std::string::npos) << off_plan;
  ProfileRow garbled = foreign;
  garbled.batch = garbled.m = 2;
  garbled.status = "o\xffk";
  shard(0, {"a.csv"}, "cold");
  shard(1, {"a.csv"}, "cold");
  write_profile_csv(dir / "shard-1-of-2" / "a.csv", {garbled});
  std::string unreadable = "merged";
  try {
    merge_shards(dir);
  } catch (const UserError& error) {
    unreadable = error.what();
  }
  EXPECT_NE(unreadable.find("M=2 has status 'o\xffk'"), std::string::npos) << unreadable;
  EXPECT_FALSE(fs::exists(dir / "a.csv"));  // nothing merged
}

}  // namespace
}  // namespace shapescope::profiler
