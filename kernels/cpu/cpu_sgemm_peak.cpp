// The CPU's MFU peak: what a large, cache-friendly Eigen sgemm achieves with the
// same threads and tiling the kernels use (no datasheet gives a CPU's sgemm rate).
#include <chrono>

#include "common/interrupt.hpp"
#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace shapescope::kernels::cpu {

double measure_sgemm_peak_tflops(int threads) {
  constexpr int64_t kSize = 1024;  // past Eigen's blocking plateau: larger sizes run no faster
  // Best of many runs over a few seconds, so a moment of contention on a shared machine
  // does not lower the peak (and inflate every MFU).
  constexpr int kMinRepeats = 5;
  constexpr double kMinSeconds = 3.0;
  const RowMajorMatrix a = RowMajorMatrix::Random(kSize, kSize);
  const RowMajorMatrix b = RowMajorMatrix::Random(kSize, kSize);  // [n][k], used transposed like the kernels
  RowMajorMatrix c(kSize, kSize);
  const int64_t tiles = kSize / kTileN;
  double best_seconds = 0, total_seconds = 0;
  // An interrupt ends it after the run in flight: the sweep stops anyway, so the peak no longer matters.
  for (int repeat = 0; (repeat < kMinRepeats || total_seconds < kMinSeconds) && !(repeat > 0 && interrupt_requested());
       ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    parallel_for(threads, tiles, [&](int64_t tile) {
      c.middleCols(tile * kTileN, kTileN).noalias() = a * b.middleRows(tile * kTileN, kTileN).transpose();
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    total_seconds += seconds;
    if (repeat == 0 || seconds < best_seconds) best_seconds = seconds;
  }
  return 2.0 * double(kSize) * double(kSize) * double(kSize) / best_seconds / 1e12;
}

}  // namespace shapescope::kernels::cpu
