// An advisory lock per output file, so two processes never write one file at
// once: flock on `<file>.lock` beside it. The lock file holds the holder's pid
// (for the waiter's message) and is removed on release; an acquirer checks that
// the file it locked is still the one at that name, so the removal never lets two in.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace shapescope {

class FileLock {
 public:
  // Takes the lock for `target`. While another process holds it, calls `on_wait(holder pid)`
  // once, then retries every 50 ms until it is free, or returns nullopt once `give_up()` is true.
  // Throws UserError when the lock file cannot be created.
  static std::optional<FileLock> acquire(const std::filesystem::path& target,
                                         const std::function<void(const std::string& holder)>& on_wait,
                                         const std::function<bool()>& give_up);
  static std::filesystem::path lock_path(const std::filesystem::path& target);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();  // removes the lock file, then releases the lock

 private:
  FileLock(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  void release();
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace shapescope
