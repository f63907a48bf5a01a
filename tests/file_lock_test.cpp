// The per-file lock: a second holder waits (and can give up), the lock file
// names the holder and disappears with the lock.
#include "common/file_lock.hpp"
#include "tests/scratch_dir.hpp"

#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace shapescope {
namespace {

namespace fs = std::filesystem;

TEST(FileLock, ASecondHolderWaitsUntilTheFirstReleasesAndTheLockFileGoes) {
  const testing_support::ScratchDir scratch;
  const fs::path target = scratch.path() / "p.csv";
  const auto never_waits = [](const std::string&) { ADD_FAILURE() << "the lock was free"; };
  std::optional<FileLock> first = FileLock::acquire(target, never_waits, [] { return false; });
  ASSERT_TRUE(first);
  EXPECT_TRUE(fs::exists(FileLock::lock_path(target)));

  std::string holder;
  int polls = 0;
  const auto second = FileLock::acquire(target, [&](const std::string& pid) { holder = pid; },
                                        [&] { return ++polls == 3; });
  EXPECT_FALSE(second) << "gave up while the first held it";
  EXPECT_EQ(holder, std::to_string(::getpid()));
  EXPECT_EQ(polls, 3);

  first.reset();
  EXPECT_FALSE(fs::exists(FileLock::lock_path(target)));
  EXPECT_TRUE(FileLock::acquire(target, never_waits, [] { return false; }));
  EXPECT_FALSE(fs::exists(FileLock::lock_path(target)));
}

}  // namespace
}  // namespace shapescope
