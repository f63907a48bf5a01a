// One profile CSV for the length of its sweep: the lock beside it (a second run
// on the same file waits), the rows this run measured, and the writes. Every
// write merges with the rows on disk — re-read whenever the file changed since
// this run last wrote it — and replaces the file atomically, so no run wipes
// another's rows. A finished point is written at once unless writing that often
// would take more than 2% of the sweep: a SIGKILL then loses at most the points
// measured in the last kWriteSpacing write times (docs/profile.md, "Resuming, runs side by side, kills").
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "common/file_lock.hpp"
#include "common/profile_schema.hpp"

namespace shapescope::profiler {

// Writes are spaced by at least this many times the last write's duration (at most 1/50 = 2% of the time).
inline constexpr double kWriteSpacing = 50;

class ProfileWriter {
 public:
  // Locks `csv`; while another run holds it, says so on stderr and waits. nullopt when `give_up` turned
  // true while waiting. Throws UserError when the lock cannot be created.
  static std::optional<ProfileWriter> open(const std::filesystem::path& csv, const std::function<bool()>& give_up);

  // A finished point: kept, and written now unless the last write was too recent (kWriteSpacing).
  void add(const ProfileRow& row);
  // Writes every row not yet on disk (the header alone when nothing was measured and there is no file yet).
  void flush();
  // The rows on disk with this run's in place of those of the same M.
  std::vector<ProfileRow> rows();

 private:
  ProfileWriter(std::filesystem::path csv, FileLock lock) : csv_(std::move(csv)), lock_(std::move(lock)) {}
  void write();
  using Clock = std::chrono::steady_clock;
  std::filesystem::path csv_;
  FileLock lock_;
  std::vector<ProfileRow> measured_;
  bool unwritten_ = false;
  std::optional<std::filesystem::file_time_type> written_time_;  // the file as this run left it
  std::uintmax_t written_size_ = 0;
  std::vector<ProfileRow> on_disk_;                              // as of the last read or write
  Clock::time_point last_write_end_{};
  double last_write_seconds_ = 0;
};

}  // namespace shapescope::profiler
