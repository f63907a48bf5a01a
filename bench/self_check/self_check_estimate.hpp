// How long the self-check takes on an H100 (graph timing, the default measurement), before measuring anything:
// for the plan printed by --list-shapes, and as the start of the ETA a run prints.
//
// Fitted to the point phases of the committed H100 graph-timed sidecars (profiles/nvidia_h100_80gb_hbm3/,
// fp8_blockscale and cublaslt_fp8_blockscale, 2026-11-23/24, --max-seconds-per-point 0.1, 5 samples):
// a point costs about 3 ms of preparing, graph rotation, warm-up and release, plus the longer of
//  - the float64 comparison of sampled outputs, on a host thread beside the timing: ~1.1 ms per 1000 of K
//    (K 18432: 17 ms, K 7168: 6.5-7.3 ms, K 2304: 1.5 ms, K <= 512: 0.2 ms), and
//  - the timed and warm-up runs: 7 kernel runs at 65% of the 1979 TFLOP/s FP8 peak.
// Opening a profile (weights made and quantized on the device) adds ~0.5 s per file, the device's baseline
// (clock warm-up, timing floors) ~10 s per run.
#pragma once

#include <cstdint>
#include <vector>

namespace shapescope::self_check {

double estimated_point_seconds(int64_t n, int64_t k, int64_t m);
inline constexpr double kEstimatedFileOpenSeconds = 0.5;
inline constexpr double kEstimatedBaselineSeconds = 10;

// The points of one shape for `kernels` kernels over `m_values`, the files' opening included.
double estimated_shape_seconds(int64_t n, int64_t k, const std::vector<int64_t>& m_values, int kernels);

}  // namespace shapescope::self_check
