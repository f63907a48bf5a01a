// The JSON sidecar beside every profile CSV (same stem, .json): where, when, how and with what the profile
// was measured. Its keys and their types are declared once, in sidecar_schema.cpp beside the CSV's columns
// (profile_schema.cpp): the profiler writes a Sidecar through sidecar_json and the analyzer reads one
// through parse_sidecar, so neither spells a key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace shapescope {

struct SidecarDevice {
  std::string name;             // e.g. "NVIDIA H200"
  std::string backend;          // cpu | cuda | hip
  int64_t multiprocessors = 0;  // SMs, CUs or CPU cores; 0: unknown
  uint64_t l2_bytes = 0, memory_bytes = 0;
  std::string driver_version, runtime_version;
  double max_sm_clock_mhz = 0;
  std::string uuid;
  double copy_tb_per_s = 0;  // measured device-to-device copy; 0 when unknown
};

struct SidecarClock {
  double sm_clock_mhz = 0, temperature_c = 0, power_w = 0;
};

struct SidecarKernel {
  std::string name, dtype, formats, description;
};

struct SidecarProblem {
  std::string model, module;  // "" for a raw --shape
  int64_t tp = 0;             // 0: unknown
  int64_t n = 0, k = 0, batch_count = 1, experts = 0, top_k = 0;
  bool cuts_scale_block = false;
  bool raw_shape = false;  // profile --shape: no model, module "" and tp 1
  std::string format;      // the layer's block format (common/block_format.hpp); "" in older files
};

struct SidecarPeak {
  double tflops = 0;
  std::string source;
};

struct SidecarMeasurement {
  int64_t warmup_runs = 0, min_samples = 0, max_samples = 0;
  double target_rel_stderr = 0, max_seconds_per_point = 0;
  std::string stopping_criterion;   // profiler/stopping_criterion.hpp
  nlohmann::json criterion_params;  // every parameter it ran with: the given ones over its defaults
  bool hot = false;
  uint64_t seed = 0;
  std::string timing;  // events | graph | kernel
  bool programmatic_launch = false;
  bool blocking_kernel = false;  // profile --blocking-kernel; false in files written before it (no hold)
  // Written by their owners in profiler/ (operand_sets, timing_floors) and carried as they are.
  nlohmann::json graph_rotation, timing_floors;
};

struct SidecarSweep {
  double wall_s = 0, setup_s = 0, timed_kernel_s = 0, overhead_ratio = 0;
  bool interrupted = false;
  std::optional<nlohmann::json> point_phases;  // profiler/point_phases.hpp; dense sweeps with measured points
};

struct Sidecar {
  std::string shapescope_version, git_commit, date_utc, command_line;
  SidecarDevice device;
  std::string cpu_model;
  std::optional<SidecarClock> clock_at_start;  // null when the device cannot tell
  SidecarKernel kernel;
  SidecarProblem problem;
  SidecarPeak peak;
  SidecarMeasurement measurement;
  nlohmann::json measurement_fingerprint;  // profiler/measurement_fingerprint.hpp: what a resumed run must match
  SidecarSweep sweep;
  std::optional<nlohmann::json> grouped;  // grouped sweeps: routing, layout, the exact group sizes per M
  std::optional<nlohmann::json> format;    // the block format that ran: name, operands, weight_only, dtype
  std::optional<nlohmann::json> m_search;  // --m-search adaptive: the grid it refined (profiler/m_search.hpp)
};

// The keys that code beside this schema edits in place: a resumed, completed or merged file keeps every key
// it holds (a newer build's too), so it is edited as JSON rather than read into a Sidecar and written back.
namespace sidecar_key {
inline constexpr const char* kDevice = "device";
inline constexpr const char* kClockAtStart = "clock_at_start";
inline constexpr const char* kPeak = "peak";
inline constexpr const char* kSweep = "sweep";
inline constexpr const char* kInterrupted = "interrupted";  // in kSweep
inline constexpr const char* kMeasurementFingerprint = "measurement_fingerprint";
inline constexpr const char* kShards = "shards";  // profile --merge: what each shard's sidecar said
}  // namespace sidecar_key

nlohmann::json sidecar_json(const Sidecar& sidecar);
// Absent or mistyped keys keep their defaults (sidecars written by older builds, or by hand).
Sidecar parse_sidecar(const nlohmann::json& content);

// `<csv without .csv>.json`.
std::filesystem::path sidecar_path(const std::filesystem::path& csv_path);
// The sidecar beside `csv_path` as JSON; nullopt when there is none. Throws UserError when it is not JSON.
std::optional<nlohmann::json> read_sidecar(const std::filesystem::path& csv_path);

}  // namespace shapescope
