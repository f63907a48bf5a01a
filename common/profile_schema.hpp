// One row of a shapescope profile CSV. The first five columns are exactly the
// study's (batch,kernel_time,flops,utils,kernel_name) so its analyzer reads our files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shapescope {

// status values
inline constexpr const char* kStatusOk = "ok";
inline constexpr const char* kStatusNumericalFail = "numerical_fail";  // rel_err above threshold or unwritten output
inline constexpr const char* kStatusError = "error";                   // the kernel or its setup failed
inline constexpr const char* kStatusSkippedOom = "skipped-oom";        // buffers do not fit
inline constexpr const char* kStatusUnsupported = "unsupported";       // the kernel cannot run this shape
inline constexpr const char* kStatusThrottled = "throttled";           // measured below the starting SM clock
inline constexpr const char* kStatusNoRows = "no-rows";                // grouped: no token reached this GPU's experts
inline constexpr const char* kStatuses[] = {kStatusOk,          kStatusNumericalFail, kStatusError, kStatusSkippedOom,
                                           kStatusUnsupported, kStatusThrottled,     kStatusNoRows};
// True when the row holds a measurement the analysis may use: ok, or throttled (measured, and flagged for
// the clock it ran at). Every other status is a point skipped or failed.
inline bool is_measured_status(std::string_view status) { return status == kStatusOk || status == kStatusThrottled; }
// Profiles written before the timing column existed were timed this way.
inline constexpr const char* kTimingEvents = "events";

struct ProfileRow {
  int64_t batch = 0;           // M
  double kernel_time_us = 0;   // median
  double tflops = 0;
  double utils = 0;            // MFU fraction of peak_tflops
  std::string kernel_name;     // what actually ran
  int64_t m = 0, n = 0, k = 0, batch_count = 1;
  std::string dtype, kernel, backend, device;
  double peak_tflops = 0;
  double time_us_min = 0, time_us_max = 0, time_us_stddev = 0;
  int64_t samples = 0;
  double gbytes_per_s = 0;
  double rel_err = 0;
  std::string status = kStatusOk;
  // Extension columns (after the required ones; readers treat them as optional).
  double ci95_us = 0;            // half-width of the 95% confidence interval of the time
  int64_t passes = 1;            // sweeps over the M list this row aggregates (--repeat)
  double sm_clock_mhz = 0;       // at the start of the point
  double sm_clock_end_mhz = 0;
  double temperature_c = 0;
  double power_w = 0;
  // Of the point's time (its start to end clock readings), the share in % the board's power policy held the
  // SM clock below what was asked (the driver's cumulative violation counter), and the enforced power limit;
  // empty unless `profile --power-accounting` read them on a device that keeps the counter, as in older profiles.
  std::optional<double> power_capped_pct, power_limit_w;
  // The SM clock probed on the device between the point's timed samples (kernels/sm_clock_probe.hpp): the lowest
  // probe and their mean; empty where the device cannot probe (the CPU, ROCm), under kernel timing, with
  // --clock-probes off, and in older files.
  std::optional<double> sm_clock_sampled_min_mhz, sm_clock_sampled_mean_mhz;
  std::string timing = kTimingEvents;  // events | graph | kernel (kernels::TimingMode)
  int64_t operand_sets = 1;      // distinct operand copies a graph replay rotates over
  std::string launched;          // kernel timing: every kernel a run launched ("a; b")
  // The kernel's launch configuration for this shape (kernels::KernelConfig); 0: not recorded, as in
  // profiles written before these columns and rows of kernels that do not say.
  int64_t tile_m = 0, tile_n = 0;
  int64_t cluster_m = 0, cluster_n = 0, cluster_k = 0;
  int64_t split_k = 0;
  std::string format;            // the block format the kernel ran (common/block_format.hpp); "" in older files
  std::string note;              // why a point was skipped or failed
  // Grouped GEMM columns (MoE experts, `profile --module experts`): present in grouped profiles only.
  // batch (= m) is then the batch's tokens; flops and utils count the useful rows only.
  struct Grouped {
    int64_t groups = 0;          // experts on the profiled GPU
    int64_t active_groups = 0;   // of them with rows
    int64_t rows_min = 0, rows_max = 0;
    double rows_mean = 0;        // over all groups
    int64_t useful_rows = 0;     // (token, expert) pairs on this GPU
    int64_t padded_rows = 0;     // the layout's rows that hold no token
    int64_t executed_rows = 0;   // rows the kernel's math covered, its own padding included
    double executed_tflops = 0, executed_utils = 0;
    double sol_us = 0;           // speed of light: max(useful FLOPs at the peak, the fewest bytes at the copy bandwidth)
    double sol_fraction = 0;     // sol_us / kernel_time
    std::string routing;         // uniform, lognormal:1.5, ..., preset:<name>
    std::string layout;          // contiguous:128, masked:256
    int64_t ep = 1;
  };
  std::optional<Grouped> grouped;
};

const std::vector<std::string>& profile_columns();
std::vector<std::string> to_fields(const ProfileRow& row);
// The grouped columns, written after profile_columns() by files whose rows are grouped.
const std::vector<std::string>& grouped_profile_columns();
std::vector<std::string> to_grouped_fields(const ProfileRow::Grouped& grouped);
// Reads a row from a header-mapped record; missing optional columns keep defaults (the grouped
// ones are read when the header has a "groups" column).
// Throws UserError "source:line: ..." on a malformed required value.
ProfileRow parse_profile_row(const std::vector<std::string>& header, const std::vector<std::string>& fields,
                             const std::string& where);

}  // namespace shapescope
