// Hardware counters of one GEMM run at one M (`profile --counters`), and the file that
// holds them beside a profile CSV, `<csv without .csv>.counters.csv`: profile writes it,
// analyze --explain-with-counters reads it (one writer, one reader, both here).
//
// Counters come from a separate launch after timing (collecting replays a kernel per
// pass and would perturb the timed samples). A metric the device could not collect is
// NaN in memory and empty in the file; the `missing` column names it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace shapescope {

struct KernelCounters {
  int64_t m = 0;
  double duration_us = 0;             // summed over every kernel of the run
  double dram_read_bytes = 0;
  double dram_write_bytes = 0;
  double l2_hit_rate_pct = 0;         // duration-weighted over the kernels
  double achieved_occupancy_pct = 0;  // warps active / the SM's warp slots, while active
  double sm_active_pct = 0;           // time SMs had work / elapsed time (below 100: idle SMs, a tail)
  double tensor_pipe_pct = 0;         // tensor pipe busy / peak, while active
  double instructions = 0;            // warp instructions issued
  double min_bytes = 0;               // fewest bytes the run must move (operands once, output once)
  std::vector<std::string> kernels;   // every kernel the run launched, in order
  std::vector<std::string> missing;   // metric names the device did not provide
  double dram_bytes() const { return dram_read_bytes + dram_write_bytes; }
};

// One collected metric: the profiler's name (Hopper) and where its value goes. A field
// whose metric is a ratio is weighted by each kernel's duration when a run has several.
struct CounterMetric {
  const char* name;    // what CUPTI and Nsight Compute call it
  const char* column;  // the counters file's column
  double KernelCounters::*field;
  bool is_ratio;
};
// The metric set, in the file's column order (duration first: it weights the ratios).
const std::vector<CounterMetric>& counter_metrics();

// `<csv without .csv>.counters.csv`.
std::filesystem::path counters_path(const std::filesystem::path& csv_path);

// Rows keyed by M. Throws UserError naming the file and line on a malformed file.
std::map<int64_t, KernelCounters> read_counters_file(const std::filesystem::path& path);
// Merges `rows` into the file (a row replaces the file's row of the same M), atomically.
void write_counters_file(const std::filesystem::path& path, const std::vector<KernelCounters>& rows);

}  // namespace shapescope
