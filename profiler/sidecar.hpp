// The JSON file beside each profile CSV: where, when, how and with what it was measured.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/model_catalog.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"
#include "profiler/measurement_fingerprint.hpp"
#include "profiler/peak.hpp"
#include "profiler/point_phases.hpp"
#include "profiler/timing_floors.hpp"

namespace shapescope::profiler {

struct SweepTiming {
  double wall_s = 0;       // the file's sweep, setup (weights, peak) excluded
  double setup_s = 0;      // opening the session: weight generation and preparation
  double timed_s = 0;      // sum of timed kernel time
  double overhead() const { return wall_s > 0 ? 1.0 - timed_s / wall_s : 0; }
};

struct SidecarContent {
  kernels::DeviceInfo device;
  std::optional<kernels::ClockSample> clock;
  const kernels::KernelEntry* kernel = nullptr;
  const kernels::GroupedKernelEntry* grouped_kernel = nullptr;  // grouped sweeps: set instead of kernel
  GemmProblem problem;
  BlockFormatId format = BlockFormatId::fp8_blockscale;  // what the kernel ran (problem.format: the layer's)
  Peak peak;
  MeasureOptions measure;
  uint64_t seed = 0;
  MeasurementFingerprint fingerprint;  // what a resumed run must match
  std::string command_line;
  SweepTiming timing;
  PhaseLedger phases;  // where the measured points' wall time went (dense sweeps)
  bool interrupted = false;
  TimingFloors floors;
  bool programmatic_launch = false;
  std::optional<nlohmann::json> grouped;  // grouped sweeps: routing, layout, the exact group sizes per M
};

nlohmann::json sidecar_json(const SidecarContent& content);
// `<csv without .csv>.json`, written atomically.
std::filesystem::path sidecar_path(const std::filesystem::path& csv_path);
void write_sidecar(const std::filesystem::path& csv_path, const SidecarContent& content);
// The sidecar beside `csv_path` as JSON; nullopt when there is none. Throws UserError when it is not JSON.
std::optional<nlohmann::json> read_sidecar(const std::filesystem::path& csv_path);

std::string utc_now_iso8601();

}  // namespace shapescope::profiler
