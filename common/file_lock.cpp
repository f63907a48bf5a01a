#include "common/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

constexpr auto kRetryInterval = std::chrono::milliseconds(50);

// True when `fd` is still the file at `path` (not removed or replaced by a releasing holder).
bool still_linked(int fd, const std::filesystem::path& path) {
  struct stat opened {}, named {};
  if (::fstat(fd, &opened) != 0 || ::stat(path.c_str(), &named) != 0) return false;
  return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

std::string holder_of(const std::filesystem::path& path) {
  char buffer[32] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "unknown";
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  return n > 0 ? std::string(buffer, std::size_t(n)) : "unknown";
}

}  // namespace

std::filesystem::path FileLock::lock_path(const std::filesystem::path& target) {
  std::filesystem::path path = target;
  return path += ".lock";
}

std::optional<FileLock> FileLock::acquire(const std::filesystem::path& target,
                                          const std::function<void(const std::string& holder)>& on_wait,
                                          const std::function<bool()>& give_up) {
  const std::filesystem::path path = lock_path(target);
  bool waited = false;
  while (true) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw UserError(fmt::format("cannot create the lock file {}: {}; check the folder's permissions", path.string(),
                                  std::strerror(errno)));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      if (still_linked(fd, path)) {
        const std::string pid = std::to_string(::getpid());
        // The pid only feeds a waiter's message: the lock holds without it.
        const bool recorded = ::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) == ssize_t(pid.size());
        static_cast<void>(recorded);
        return FileLock(path, fd);
      }
      ::close(fd);  // the holder removed it as we locked it: lock the new one
      continue;
    }
    ::close(fd);
    if (!waited) {
      on_wait(holder_of(path));
      waited = true;
    }
    if (give_up()) return std::nullopt;
    std::this_thread::sleep_for(kRetryInterval);
  }
}

FileLock::FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() { release(); }

void FileLock::release() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // before the unlock: a waiter that then locks the old file sees it unlinked
  ::close(fd_);
  fd_ = -1;
}

}  // namespace shapescope
