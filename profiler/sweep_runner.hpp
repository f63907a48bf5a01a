// Runs a SweepPlan: every GEMM problem x kernel becomes one profile CSV (+ JSON
// sidecar) under the output folder, measured point by point over M. Holds each
// file's lock while it sweeps it, resumes rows measured the same way, records
// failures as rows, rewrites the CSV atomically, merged with the rows on disk.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/model_catalog.hpp"
#include "common/profile_schema.hpp"
#include "kernels/kernel.hpp"
#include "profiler/device_baseline.hpp"
#include "profiler/m_search.hpp"
#include "profiler/measure.hpp"
#include "profiler/peak.hpp"
#include "profiler/point_phases.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/sidecar.hpp"
#include "profiler/timing_floors.hpp"

namespace shapescope::profiler {

// How a sweep measures, dense or grouped alike.
struct SweepSettings {
  MeasureOptions measure;
  std::filesystem::path out_dir;
  uint64_t seed = 1;                 // weights (and routing); each M's activations derive from it
  PeakMode peak_mode = PeakMode::datasheet;
  double peak_override_tflops = 0;
  double check_threshold = kernels::kCheckThreshold;  // rel_err above it: numerical_fail
  std::string command_line;
  bool progress = false;
  bool steady_warm_up = true;        // on a GPU, warm up until the SM clock settles before the sweep
  bool programmatic_launch = false;  // our kernels overlap their prologue with the previous run's tail
  MSearchOptions m_search;           // --m-search, --max-points, --time-budget
};

struct SweepPlan : SweepSettings {
  std::vector<GemmProblem> problems;
  std::vector<std::string> kernels;  // registry names
  std::vector<int64_t> m_values;     // sorted, unique
  int repeat = 1;                    // --repeat: passes over the M list, each in its own shuffled order
  // A shard's M values per CSV file name (profile --shard); a file absent from it is another shard's.
  // nullopt: every file sweeps m_values.
  std::optional<std::map<std::string, std::vector<int64_t>>> shard_m_values;
  // Measured once by a caller that runs many sweeps on one device (a worker's shards); null: run_sweep
  // measures its own.
  std::shared_ptr<DeviceBaseline> baseline;
};

// The M values `plan` measures into the file `csv_name` (empty: none, the file is not written).
const std::vector<int64_t>& m_values_of_file(const SweepPlan& plan, const std::string& csv_name);

struct FileSummary {
  std::filesystem::path csv;
  int64_t points = 0, ok = 0, failed = 0, resumed = 0;
  double best_utils = 0, worst_utils = 0;
  int64_t best_m = 0, worst_m = 0;
  SweepTiming timing;
};

struct SweepResult {
  std::vector<FileSummary> files;
  SweepTiming timing;  // all files together
  PhaseLedger phases;  // every measured point of every file
  TimingFloors floors;
  bool interrupted = false;
};

// Points, ok and failed counts, best and worst MFU of a profile's rows.
FileSummary summarize_profile(const std::filesystem::path& csv, const std::vector<ProfileRow>& rows);

// The end of one file's sweep, dense or grouped: its rows written, its sidecar with the sweep's wall time
// (interrupted or not), its summary added to `result`. True when the sweep was interrupted.
bool close_profile_file(ProfileWriter& file, SidecarContent& sidecar, const std::filesystem::path& csv,
                        int64_t resumed, double wall_s, SweepResult& result);

// A complete file left by a run killed between its last CSV write and its sidecar's: the sidecar still says
// interrupted. Nothing is left to measure, so only that flag is set right.
void mark_sidecar_complete(const std::filesystem::path& csv);

// `<model>_<module>_tp<tp>_N<n>_K<k>[_B<batch>]_<kernel>[_<timing>].csv`, a raw shape (--shape)
// `shape_N<n>_K<k>[_B<batch>]_<kernel>[_<timing>].csv`: events-timed files keep the name they
// always had; graph- and kernel-timed ones live beside them.
std::string profile_file_name(const GemmProblem& problem, const std::string& kernel,
                              kernels::TimingMode timing = kernels::TimingMode::events);

// The seed of an M's activations in a sweep of weight seed `seed` (counters re-create them).
uint64_t activation_seed(uint64_t seed, int64_t m);

// Stops between points when interrupt_requested(), after writing what it has.
SweepResult run_sweep(kernels::Device& device, const SweepPlan& plan);

}  // namespace shapescope::profiler
