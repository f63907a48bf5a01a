#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

// What a sibling temporary is for: the write's temporary, or a probe of whether a folder or path is writable.
constexpr const char* kTempPurpose = "tmp";
constexpr const char* kProbePurpose = "probe";

// Unique within the process (the counter) and across processes (the pid), so
// concurrent writers never share a temporary.
std::filesystem::path sibling_temp_path(const std::filesystem::path& path, const char* purpose) {
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temp = path;
  temp += fmt::format(".{}.{}.{}", purpose, ::getpid(), counter++);
  return temp;
}

// Closes the descriptor on every path out of write_file_atomically.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Returns close()'s result: on some file systems write errors surface only here.
  int close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result;
  }

 private:
  int fd_;
};

[[noreturn]] void fail_write(const std::filesystem::path& path, const std::filesystem::path& temp, int error) {
  std::error_code ignored;
  std::filesystem::remove(temp, ignored);
  throw UserError(fmt::format("cannot write {}: {}; check free space and permissions of its folder", path.string(),
                              std::strerror(error)));
}

// Makes the rename itself durable; failure here is not fatal (some file systems refuse fsync on folders).
void sync_directory(const std::filesystem::path& directory) {
  const int fd = ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// The writer's pid when `name` is "<anything>.tmp.<pid>.<counter>" (or .probe.), else 0.
pid_t temp_writer(std::string_view name) {
  const std::size_t counter_dot = name.rfind('.');
  if (counter_dot == std::string_view::npos || counter_dot == 0) return 0;
  const std::size_t pid_dot = name.rfind('.', counter_dot - 1);
  if (pid_dot == std::string_view::npos) return 0;
  const std::string_view purpose_end = name.substr(0, pid_dot);
  const auto ends_with = [&](const char* purpose) {
    const std::string suffix = std::string(".") + purpose;
    return purpose_end.size() > suffix.size() && purpose_end.substr(purpose_end.size() - suffix.size()) == suffix;
  };
  if (!ends_with(kTempPurpose) && !ends_with(kProbePurpose)) return 0;
  const auto whole_number = [](std::string_view text, long& value) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return !text.empty() && error == std::errc() && end == text.data() + text.size();
  };
  long pid = 0, counter = 0;
  if (!whole_number(name.substr(pid_dot + 1, counter_dot - pid_dot - 1), pid) ||
      !whole_number(name.substr(counter_dot + 1), counter) || pid <= 0) {
    return 0;
  }
  return static_cast<pid_t>(pid);
}

}  // namespace

int remove_stale_temporaries(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> stale;
  std::error_code error;
  for (auto entry = std::filesystem::directory_iterator(directory, error);
       !error && entry != std::filesystem::directory_iterator(); entry.increment(error)) {
    const pid_t writer = temp_writer(entry->path().filename().string());
    if (writer == 0 || writer == ::getpid()) continue;
    if (::kill(writer, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to probe): keep it
    stale.push_back(entry->path());
  }
  int removed = 0;
  for (const auto& path : stale) removed += std::filesystem::remove(path, error) ? 1 : 0;
  return removed;
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path temp = sibling_temp_path(path, kTempPurpose);
  FileDescriptor file(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (file.get() < 0) fail_write(path, temp, errno);
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(file.get(), content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_write(path, temp, errno);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(file.get()) != 0) fail_write(path, temp, errno);
  if (file.close() != 0) fail_write(path, temp, errno);
  if (::rename(temp.c_str(), path.c_str()) != 0) fail_write(path, temp, errno);
  sync_directory(path.parent_path());
}

void ensure_writable_directory(const std::filesystem::path& directory, std::string_view option) {
  const auto refuse = [&](const std::string& reason) {
    throw UserError(fmt::format("cannot write to {}: {}; pass {} <a writable folder>", directory.string(), reason,
                                option));
  };
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) refuse(error.message());
  if (!std::filesystem::is_directory(directory, error)) refuse("not a folder");
  // Permission bits do not tell the whole story (read-only mounts, root, ACLs): try it.
  const std::filesystem::path probe = sibling_temp_path(directory / ".shapescope-write-probe", kProbePurpose);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) refuse(std::strerror(errno));
  ::close(fd);
  std::filesystem::remove(probe, error);
}

void ensure_writable_file(const std::filesystem::path& path, std::string_view option) {
  const std::filesystem::path probe = sibling_temp_path(path, kProbePurpose);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw UserError(fmt::format("cannot write {}: {}; pass {} <a path in a writable folder>", path.string(),
                                std::strerror(errno), option));
  }
  ::close(fd);
  std::error_code ignored;
  std::filesystem::remove(probe, ignored);
}

}  // namespace shapescope
