// One measured point into its CSV row, the same for dense and grouped sweeps: times,
// TFLOP/s and MFU, bandwidth, clocks, and the status (a failed check before throttling);
// or why a point is not measured.
#pragma once

#include <optional>
#include <string>

#include "common/profile_schema.hpp"
#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"

namespace shapescope::profiler {

// `flops`: what MFU counts (a grouped GEMM's useful FLOPs); `min_bytes`: the fewest bytes one run moves.
void record_measurement(ProfileRow& row, const Measurement& m, const kernels::CheckResult& check, double flops,
                        double min_bytes, double check_threshold);

// The kernel's launch configuration for the point's shape into the row's config columns.
void record_config(ProfileRow& row, const kernels::KernelConfig& config);

// A point that is not measured gets its status and note: `unsupported` (the kernel refuses the shape: not an
// error, whether or not its session opened), else an error when the kernel's session did not open
// (`open_error`). False when the point is to be measured.
bool record_unmeasured(ProfileRow& row, const std::optional<std::string>& unsupported, bool session_open,
                       const std::string& open_error);

}  // namespace shapescope::profiler
