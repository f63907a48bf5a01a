#include "common/atomic_file.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "common/user_error.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  // A test may take the folder's permissions away: give them back so that it can be removed.
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(folder_, fs::perms::owner_all, ignored);
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    return content.str();
  }
  testing_support::ScratchDir scratch_;
  const fs::path folder_ = scratch_.path();
};

TEST_F(AtomicFile, ReplacesContentAndLeavesNoTemporaries) {
  const fs::path path = folder_ / "profile.csv";
  write_file_atomically(path, "first\n");
  write_file_atomically(path, std::string("second\0with nul\n", 16));
  EXPECT_EQ(read(path), std::string("second\0with nul\n", 16));
  EXPECT_EQ(std::distance(fs::directory_iterator(folder_), fs::directory_iterator()), 1);
}

TEST_F(AtomicFile, StaleTemporariesOfDeadWritersAreRemovedAndLiveOnesKept) {
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  int status = 0;
  ::waitpid(dead, &status, 0);  // reaped: no process has this pid now
  const fs::path stale = folder_ / ("p.csv.tmp." + std::to_string(dead) + ".3");
  const fs::path live = folder_ / ("p.csv.tmp." + std::to_string(::getppid()) + ".0");
  const fs::path lookalike = folder_ / ("p.csv.tmpx." + std::to_string(dead) + ".3");
  const fs::path probe = folder_ / (".shapescope-write-probe.probe." + std::to_string(dead) + ".0");
  for (const fs::path& path : {stale, live, lookalike, probe}) std::ofstream(path) << "x";
  EXPECT_EQ(remove_stale_temporaries(folder_), 2);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(probe));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(lookalike));
}

TEST_F(AtomicFile, FailedWriteKeepsTheOldFile) {
  const fs::path path = folder_ / "missing_folder" / "profile.csv";
  EXPECT_THROW(write_file_atomically(path, "x"), UserError);
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(AtomicFile, EnsureWritableCreatesNestedFolders) {
  const fs::path nested = folder_ / "a" / "b" / "c";
  ensure_writable_directory(nested);
  EXPECT_TRUE(fs::is_directory(nested));
  EXPECT_TRUE(fs::is_empty(nested)) << "the write probe must be removed";
}

TEST_F(AtomicFile, EnsureWritableRejectsAFileInTheWay) {
  const fs::path blocker = folder_ / "blocker";
  write_file_atomically(blocker, "not a folder");
  try {
    ensure_writable_directory(blocker / "out");
    FAIL() << "no error for a folder below a regular file";
  } catch (const UserError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("cannot write to " + (blocker / "out").string()), std::string::npos) << message;
    EXPECT_NE(message.find("pass --out <a writable folder>"), std::string::npos) << message;
  }
}

TEST_F(AtomicFile, EnsureWritableRejectsAReadOnlyFolder) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores permission bits";
  const fs::path read_only = folder_ / "read_only";
  fs::create_directories(read_only);
  fs::permissions(read_only, fs::perms::owner_read | fs::perms::owner_exec);
  EXPECT_THROW(ensure_writable_directory(read_only), UserError);
}

}  // namespace
}  // namespace shapescope
