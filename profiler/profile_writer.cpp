#include "profiler/profile_writer.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "profiler/profile_csv.hpp"

namespace shapescope::profiler {

std::optional<ProfileWriter> ProfileWriter::open(const std::filesystem::path& csv,
                                                 const std::function<bool()>& give_up) {
  const auto say_waiting = [&](const std::string& holder) {
    fmt::print(stderr, "profile: waiting for {}: another profile run (pid {}) is writing it\n", csv.string(), holder);
  };
  std::optional<FileLock> lock = FileLock::acquire(csv, say_waiting, give_up);
  if (!lock) return std::nullopt;
  return ProfileWriter(csv, std::move(*lock));
}

void ProfileWriter::add(const ProfileRow& row) {
  measured_.push_back(row);
  unwritten_ = true;
  const double since_last = std::chrono::duration<double>(Clock::now() - last_write_end_).count();
  if (since_last >= kWriteSpacing * last_write_seconds_) write();
}

void ProfileWriter::flush() {
  std::error_code error;
  if (unwritten_ || !std::filesystem::exists(csv_, error)) write();
}

std::vector<ProfileRow> ProfileWriter::rows() {
  std::error_code error;
  const bool exists = std::filesystem::exists(csv_, error);
  const bool changed = !written_time_ || !exists || std::filesystem::last_write_time(csv_, error) != *written_time_ ||
                       std::filesystem::file_size(csv_, error) != written_size_;
  if (changed) on_disk_ = read_profile_csv(csv_);
  return merge_rows(on_disk_, measured_);
}

void ProfileWriter::write() {
  const auto start = Clock::now();
  on_disk_ = rows();
  write_profile_csv(csv_, on_disk_);
  written_time_ = std::filesystem::last_write_time(csv_);
  written_size_ = std::filesystem::file_size(csv_);
  unwritten_ = false;
  last_write_end_ = Clock::now();
  last_write_seconds_ = std::chrono::duration<double>(last_write_end_ - start).count();
}

}  // namespace shapescope::profiler
