#include "profiler/device_lock.hpp"

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "common/user_error.hpp"

namespace shapescope::profiler {

std::filesystem::path device_lock_dir() {
  const char* dir = std::getenv("SHAPESCOPE_LOCK_DIR");
  return dir && *dir ? std::filesystem::path(dir) : std::filesystem::path("/tmp/shapescope-devices");
}

BusyPolicy parse_busy_policy(const std::string& text) {
  if (text == "wait") return BusyPolicy::wait;
  if (text == "stop") return BusyPolicy::stop;
  throw UserError(fmt::format("--device-busy '{}' is not wait or stop", text));
}

std::optional<FileLock> hold_device(const std::string& key, const std::string& description, BusyPolicy policy,
                                    const std::filesystem::path& lock_dir) {
  ensure_writable_directory(lock_dir, "SHAPESCOPE_LOCK_DIR");
  std::string holder;
  std::optional<FileLock> lock = FileLock::acquire(
      lock_dir / key,
      [&](const std::string& pid) {
        holder = pid;
        if (policy == BusyPolicy::wait) {
          fmt::print(stderr, "profile: {} is being measured by process {}; waiting until it is free\n", description, pid);
        }
      },
      [&] { return policy == BusyPolicy::stop || interrupt_requested(); });
  if (!lock && policy == BusyPolicy::stop && !interrupt_requested()) {
    throw UserError(fmt::format("{} is being measured by process {}; wait for it, or pass --device-busy wait", description,
                                holder.empty() ? "?" : holder));
  }
  return lock;
}

}  // namespace shapescope::profiler
