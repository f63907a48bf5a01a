// One measuring process per device: a sweep holds a lock named after the device (the GPU's UUID,
// which is the same whatever CUDA_VISIBLE_DEVICES numbering a process sees) for as long as it
// measures, so two sweeps never share a GPU and disturb each other's timings.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "common/file_lock.hpp"

namespace shapescope::profiler {

// $SHAPESCOPE_LOCK_DIR, else /tmp/shapescope-devices: where the device locks live (one machine).
std::filesystem::path device_lock_dir();

enum class BusyPolicy { wait, stop };
// --device-busy wait|stop; throws UserError otherwise.
BusyPolicy parse_busy_policy(const std::string& text);

// Takes the lock of the device `key` names (a GPU UUID, or "cpu-worker-<k>" for CPU workers) in
// `lock_dir`. While another process holds it: `wait` says so on stderr once and waits (nullopt when
// interrupted meanwhile); `stop` throws UserError naming the holder.
std::optional<FileLock> hold_device(const std::string& key, const std::string& description, BusyPolicy policy,
                                    const std::filesystem::path& lock_dir = device_lock_dir());

}  // namespace shapescope::profiler
