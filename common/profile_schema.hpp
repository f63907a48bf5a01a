// One row of a shapescope profile CSV. The first five columns are exactly the
// study's (batch,kernel_time,flops,utils,kernel_name) so its analyzer reads our files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shapescope {

// status values
inline constexpr const char* kStatusOk = "ok";
inline constexpr const char* kStatusNumericalFail = "numerical_fail";  // rel_err above threshold or unwritten output
inline constexpr const char* kStatusError = "error";                   // the kernel or its setup failed
inline constexpr const char* kStatusSkippedOom = "skipped-oom";        // buffers do not fit
inline constexpr const char* kStatusUnsupported = "unsupported";       // the kernel cannot run this shape
inline constexpr const char* kStatusThrottled = "throttled";           // measured below the starting SM clock
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
  std::string timing = kTimingEvents;  // events | graph | kernel (kernels::TimingMode)
  int64_t operand_sets = 1;      // distinct operand copies a graph replay rotates over
  std::string launched;          // kernel timing: every kernel a run launched ("a; b")
  std::string note;              // why a point was skipped or failed
};

const std::vector<std::string>& profile_columns();
std::vector<std::string> to_fields(const ProfileRow& row);
// Reads a row from a header-mapped record; missing optional columns keep defaults.
// Throws UserError "source:line: ..." on a malformed required value.
ProfileRow parse_profile_row(const std::vector<std::string>& header, const std::vector<std::string>& fields,
                             const std::string& where);

}  // namespace shapescope
