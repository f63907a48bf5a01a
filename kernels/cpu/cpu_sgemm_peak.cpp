// The CPU's MFU peak: what a large, cache-friendly Eigen sgemm achieves with the
// same threads and tiling the kernels use (no datasheet gives a CPU's sgemm rate).
#include <chrono>

#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace shapescope::kernels::cpu {

double measure_sgemm_peak_tflops(int threads) {
  constexpr int64_t kSize = 1024;  // past Eigen's blocking plateau, about a second on 2 cores
  constexpr int kRepeats = 5;
  const RowMajorMatrix a = RowMajorMatrix::Random(kSize, kSize);
  const RowMajorMatrix b = RowMajorMatrix::Random(kSize, kSize);  // [n][k], used transposed like the kernels
  RowMajorMatrix c(kSize, kSize);
  const int64_t tiles = kSize / kTileN;
  double best_seconds = 0;
  for (int repeat = 0; repeat < kRepeats; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    parallel_for(threads, tiles, [&](int64_t tile) {
      c.middleCols(tile * kTileN, kTileN).noalias() = a * b.middleRows(tile * kTileN, kTileN).transpose();
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (repeat == 0 || seconds < best_seconds) best_seconds = seconds;
  }
  return 2.0 * double(kSize) * double(kSize) * double(kSize) / best_seconds / 1e12;
}

}  // namespace shapescope::kernels::cpu
