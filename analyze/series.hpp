// A profile as the analyzer sees it: one kernel on one (device, N, K) over M,
// sorted by M with one point per M. Every reader produces this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shapescope::analyze {

// The output tile (rows of M, columns of N) a kernel computes per CTA / workgroup.
struct TileShape {
  int64_t m = 0, n = 0;
  bool operator==(const TileShape&) const = default;
};

struct SeriesPoint {
  int64_t m = 0;
  double time_us = 0;      // kernel time (median where known)
  double tflops = 0;
  double gbytes_per_s = 0; // the fewest bytes the GEMM must move, over its time; 0 when the source does not say
  double utils = 0;        // MFU fraction
  std::string kernel_name; // what the library ran at this M
  std::optional<TileShape> tile;  // the profile's tile columns; nullopt: not recorded (read from the kernel name)
  int64_t split_k = 1;     // CTAs sharing one output tile along K, where the profile records it
  double stddev_us = 0;    // 0 when the source does not say
  double ci95_us = 0;      // 0 when the source does not say
  // The fastest and the slowest timed sample (a pass's median where passes > 1); 0 when the source does not say.
  double fastest_us = 0, slowest_us = 0;
  int64_t passes = 1;      // sweeps this row aggregates (profile --repeat)
  double fastest_pass_us = 0;  // passes > 1: the fastest pass's median time (time_us_min), else 0
  bool throttled = false;
  double sm_clock_mhz = 0;  // the lower of the SM clocks at the point's start and end; 0 when unknown
  // The mean SM clock the device's probes measured between the samples (sm_clock_sampled_mean_mhz); nullopt
  // where the profile does not say.
  std::optional<double> sampled_sm_clock_mhz;
  // The share of the point's time the board's power policy held the SM clock down, and the enforced power
  // limit (profile columns power_capped_pct, power_limit_w); nullopt / 0 where the profile does not say.
  std::optional<double> power_capped_share;
  double power_limit_w = 0;
  std::string status = "ok";
  std::string note;        // why an excluded point was set aside, when the status alone does not say
  std::size_t line = 0;    // source line, for messages
  // Grouped profiles (MoE experts): utils counts the rows that hold a token; these say the rest.
  double executed_utils = 0;  // MFU over the rows the kernel computed, padding included
  int64_t useful_rows = 0, padded_rows = 0;
  int64_t executed_rows = 0;        // rows the kernel's math covered, its tiles' padding included; 0: unknown
  int64_t busiest_expert_rows = 0;  // the most rows one expert got (rows_max); 0: unknown
  double sol_fraction = 0;    // speed of light / time
};

// What a grouped profile's series shares: how the tokens were routed and laid out.
struct GroupedSeriesInfo {
  std::string routing;      // uniform, lognormal:1.5, preset:nvfp4_targets
  std::string layout;       // contiguous:128, or masked (slots sized per M) / masked:256
  int64_t ep = 1;
  int64_t groups = 0;       // experts on the profiled GPU
};

struct DuplicateM {
  int64_t m = 0;
  int count = 0;
  double kept_time_us = 0;
};

struct Series {
  std::string name;          // short label, derived from the file name (+ series key for multi-series files)
  std::string source;        // file path
  std::string format;        // "shapescope" | "study" | "aiter"
  std::string device;        // device name or gfx, "" when unknown
  int multiprocessors = 0;   // SM / CU count when known (AITER's cu_num, sidecar, device table)
  std::string kernel;        // kernel registry name or library, "" when unknown
  std::string dtype;
  std::string block_format;  // the block format that ran (a profile's format column); "" when unknown
  std::string model, module; // when known
  int tp = 0;                // tensor-parallel degree from the sidecar; 0 when unknown
  std::optional<GroupedSeriesInfo> grouped;  // MoE expert profiles (profile --module experts)
  int64_t n = 0, k = 0, batch_count = 1;  // 0 when unknown (study files carry them in the name)
  double peak_tflops = 0;
  std::string timing;        // shapescope's timing mode (events | graph | kernel); "" when the source does not say
  // The grid an adaptive M search chose its M from (sidecar m_search.grid), ascending; empty when
  // the profile names none (a grid sweep measures all of its M). analyze/unmeasured_m.hpp.
  std::vector<int64_t> m_grid;
  std::vector<SeriesPoint> points;   // status ok (or throttled), sorted by m, unique m
  std::vector<SeriesPoint> excluded; // failed, skipped or implausible: listed, never planned with
  std::vector<DuplicateM> duplicates;
};

enum class Dedup { first, fastest, median };

struct ReadOptions {
  Dedup dedup = Dedup::fastest;
  double peak_tflops_override = 0;  // 0: from the file, the sidecar or the device table
};

// Detects the format from the header; one file may hold many series (AITER).
// Throws UserError with file:line or the missing columns and the formats tried.
std::vector<Series> read_series_file(const std::string& path, const ReadOptions& options);

}  // namespace shapescope::analyze
