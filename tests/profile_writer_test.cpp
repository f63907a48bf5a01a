// Writes of a profile during its sweep: at once after a point unless the last
// write was too recent, merged with what is on disk, under the file's lock.
#include "profiler/profile_writer.hpp"

#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "profiler/profile_csv.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope::profiler {
namespace {

namespace fs = std::filesystem;

ProfileRow row_at(int64_t m) {
  ProfileRow row;
  row.batch = row.m = m;
  row.kernel_time_us = 10;
  return row;
}

TEST(ProfileWriter, APointIsWrittenAtOnceUnlessTheLastWriteWasTooRecent) {
  const testing_support::ScratchDir scratch;
  const fs::path csv = scratch.path() / "p.csv";
  std::optional<ProfileWriter> writer = ProfileWriter::open(csv, [] { return false; });
  ASSERT_TRUE(writer);
  const auto start = std::chrono::steady_clock::now();
  writer->add(row_at(1));
  const double write_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(read_profile_csv(csv).size(), 1u) << "the first point is written at once";
  writer->add(row_at(2));
  if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < kWriteSpacing * write_seconds) {
    EXPECT_EQ(read_profile_csv(csv).size(), 1u) << "a second write right after the first waits";
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(kWriteSpacing * write_seconds * 1.5));
  writer->add(row_at(3));
  EXPECT_EQ(read_profile_csv(csv).size(), 3u) << "once the spacing has passed, the next point writes all";

  write_profile_csv(csv, {row_at(1), row_at(2), row_at(3), row_at(7)});  // someone else's row appears on disk
  writer->add(row_at(4));
  writer->flush();
  EXPECT_EQ(read_profile_csv(csv).size(), 5u) << "the rows on disk are merged, never wiped";
  writer.reset();
  EXPECT_FALSE(fs::exists(FileLock::lock_path(csv)));
}

}  // namespace
}  // namespace shapescope::profiler
