// Runs the self-check: sweeps both kernels over every shape into OUT/raw (through the profiler's sweep, which keeps
// the rows already there and measures only the missing M), analyzes every profile into OUT/analyses (the
// `analyze` command's default rule, in-process), and writes OUT/summary.md and OUT/summary.csv.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "bench/self_check/self_check_shapes.hpp"
#include "bench/self_check/self_check_summary.hpp"

namespace shapescope::self_check {

struct SelfCheckOptions {
  std::filesystem::path out = "self_check";
  std::string backend = "auto";  // auto | cpu | cuda
  std::string ours, baseline;    // "" = the backend's pair (cuda: fp8_blockscale, cublaslt_fp8_blockscale)
  std::string m_range = "16:4096:16";
  std::string timing;  // "" = graph on a GPU, events on the CPU
  int warmup_runs = 2;
  int min_samples = 5;
  int max_samples = 2000;
  double max_seconds_per_point = 0.1;
  double time_budget_s = 0;  // 0: none
  double peak_tflops = 0;    // 0: the device's peak
  int threads = 0;           // CPU threads, 0 = all cores
  bool warm_up = true;       // GPU: settle the SM clock first
  std::string command_line;
};

// What a folder is measured with, kept in OUT/self_check.json: a rerun resumes only with the same.
struct RunSettings {
  std::string backend, ours, baseline, timing, m_range;
  bool operator==(const RunSettings&) const = default;
};

// Resolves the backend's defaults (which needs no device for cpu; auto looks for a GPU).
RunSettings resolve_settings(const SelfCheckOptions& options);

struct SweepOutcome {
  bool stopped = false;                 // the time budget or a signal ended it before every point was measured
  bool interrupted = false;             // a signal (SIGINT/SIGTERM)
  int64_t points = 0, points_done = 0;  // every point of the plan, and those on disk at the end
};

// Measures what OUT/raw lacks. Throws UserError on bad options or a folder measured with other settings.
SweepOutcome sweep_shapes(const ShapeList& list, const SelfCheckOptions& options, const RunSettings& settings);

// The settings a folder was measured with (OUT/self_check.json). Throws UserError when it has none.
// A rerun may change the shapes (the rows of every shape stay); the last run's list is recorded.
RunSettings read_settings(const std::filesystem::path& out);
// Throws UserError unless the folder's last run swept exactly `list` (--summarize-only with the run's shape options).
void check_measured_for(const ShapeList& list, const std::filesystem::path& out);

// Analyzes every profile of OUT/raw into OUT/analyses and returns the table's rows (a missing profile: an
// incomplete row).
std::vector<ShapeRow> analyze_shapes(const ShapeList& list, const std::filesystem::path& out,
                                     const RunSettings& settings);

// summary.md and summary.csv in OUT; returns the totals.
Totals write_summary(const std::vector<ShapeRow>& rows, const ShapeList& list, const std::filesystem::path& out,
                     const RunSettings& settings);

}  // namespace shapescope::self_check
