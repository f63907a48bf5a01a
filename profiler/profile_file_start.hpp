// The start of one profile file's sweep, dense or grouped alike: its lock, the rows a resumed run
// keeps (measured the same way), the sidecar fields every file records, a file with nothing left
// to measure left as it is, and the sidecar written before the first row.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/model_catalog.hpp"
#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/progress.hpp"
#include "profiler/sidecar.hpp"
#include "profiler/sweep_runner.hpp"
#include "profiler/timing_floors.hpp"

namespace shapescope::profiler {

// What every file's sidecar records of the sweep that writes it (the dense and grouped plans both carry it).
struct SweepRecord {
  const kernels::DeviceInfo& device;
  const MeasureOptions& measure;
  uint64_t seed;
  bool programmatic_launch;
  const std::string& command_line;
  const TimingFloors& floors;
  int passes = 1;  // --repeat
};

struct ProfileFileStart {
  ProfileWriter file;
  std::vector<int64_t> wanted;   // the M values this run measures into the file
  std::vector<ProfileRow> kept;  // rows of earlier runs measured the same way
  std::set<int64_t> done;        // their M values
  int64_t resumed = 0;           // how many of the M values asked for they hold
  bool complete = false;         // they hold every one: nothing to measure
  SidecarContent sidecar;        // the sweep's fields and the problem; the caller adds kernel, peak, clock, timing
};

// Locks `csv` (waiting while another run holds it; nullopt when interrupted meanwhile) and reads the rows
// of the M values in `wanted` a run of `kernel_name` may keep. Throws UserError as resumable_rows does.
std::optional<ProfileFileStart> start_profile_file(const std::filesystem::path& csv, const std::string& kernel_name,
                                                   const GemmProblem& problem, const std::vector<int64_t>& wanted,
                                                   const SweepRecord& record);

// A complete file: left as it is (its sidecar marked complete), each wanted M counted done in `progress`
// once per pass, its summary added to `result`.
void keep_complete_file(const ProfileFileStart& start, const std::filesystem::path& csv, int passes,
                        Progress& progress, SweepResult& result);

// The file's row for M before it is measured: M, the kernel (registry name), its dtype and backend, and
// the device, peak and timing of `sidecar`.
ProfileRow unmeasured_row(const SidecarContent& sidecar, const std::string& kernel_name, const std::string& dtype,
                          kernels::BackendKind backend, int64_t m);

// Before any row: a CSV never exists without the sidecar that says how its rows were measured (marked
// interrupted until close_profile_file). `setup_start`: when opening the kernel began.
void write_sidecar_before_rows(const std::filesystem::path& csv, SidecarContent& sidecar,
                               std::chrono::steady_clock::time_point setup_start);

}  // namespace shapescope::profiler
