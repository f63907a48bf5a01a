// What the operating system says about this CPU (Linux /proc and /sys).
#pragma once

#include <cstddef>
#include <string>

namespace shapescope::kernels::cpu {

// /proc/cpuinfo "model name", or "unknown CPU".
std::string cpu_model_name();
// Size of the highest-level cache in sysfs, or 64 MB when sysfs does not say.
std::size_t last_level_cache_bytes();
// A /proc/meminfo field ("MemTotal", "MemAvailable") in bytes, 0 when absent.
std::size_t meminfo_bytes(const std::string& field);
// uname's kernel release, e.g. "6.1.0-18-amd64".
std::string kernel_release();

}  // namespace shapescope::kernels::cpu
