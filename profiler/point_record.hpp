// One measured point into its CSV row, the same for dense and grouped sweeps: times,
// TFLOP/s and MFU, bandwidth, clocks, and the status (a failed check before throttling).
#pragma once

#include "common/profile_schema.hpp"
#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"

namespace shapescope::profiler {

// `flops`: what MFU counts (a grouped GEMM's useful FLOPs); `min_bytes`: the fewest bytes one run moves.
void record_measurement(ProfileRow& row, const Measurement& m, const kernels::CheckResult& check, double flops,
                        double min_bytes, double check_threshold);

}  // namespace shapescope::profiler
