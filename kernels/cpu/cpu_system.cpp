#include "kernels/cpu/cpu_system.hpp"

#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace shapescope::kernels::cpu {

namespace {
std::string read_first_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}
}  // namespace

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

std::size_t last_level_cache_bytes() {
  constexpr std::size_t kDefault = std::size_t(64) << 20;
  const std::filesystem::path caches = "/sys/devices/system/cpu/cpu0/cache";
  std::error_code error;
  int best_level = -1;
  std::size_t best_bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(caches, error)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    const std::string level_text = read_first_line(entry.path() / "level");
    const std::string size_text = read_first_line(entry.path() / "size");  // e.g. "32768K"
    if (level_text.empty() || size_text.empty()) continue;
    std::size_t bytes = std::stoull(size_text);
    if (size_text.back() == 'K') bytes <<= 10;
    if (size_text.back() == 'M') bytes <<= 20;
    const int level = std::stoi(level_text);
    if (level > best_level || (level == best_level && bytes > best_bytes)) {
      best_level = level;
      best_bytes = bytes;
    }
  }
  return best_bytes > 0 ? best_bytes : kDefault;
}

std::size_t meminfo_bytes(const std::string& field) {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      std::istringstream values(line.substr(field.size() + 1));
      std::size_t kib = 0;
      values >> kib;
      return kib << 10;
    }
  }
  return 0;
}

std::string kernel_release() {
  utsname names{};
  if (uname(&names) != 0) return "unknown";
  return names.release;
}

}  // namespace shapescope::kernels::cpu
