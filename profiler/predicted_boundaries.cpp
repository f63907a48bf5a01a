#include "profiler/predicted_boundaries.hpp"

#include <algorithm>
#include <map>

namespace shapescope::profiler {

std::vector<PredictedBoundary> predicted_boundaries(const kernels::KernelEntry& kernel, const GemmProblem& problem,
                                                    int multiprocessors, int64_t max_m) {
  std::map<int64_t, double> boundaries;  // M -> effect
  if (!kernel.config_for || multiprocessors <= 0 || max_m < 1) return {};
  const auto add = [&](int64_t m, double effect) {
    double& at = boundaries[m];
    at = std::max(at, effect);
  };
  for (int64_t low = 1; low <= max_m; low *= 2) {
    const int64_t high = std::min(max_m, 2 * low - 1);
    const kernels::KernelConfig config =
        kernel.config_for(kernels::GemmShape{low, problem.n, problem.k, problem.batch_count});
    if (config.tile_m <= 0 || config.tile_n <= 0) continue;
    const int64_t tile_m = config.tile_m, tile_n = config.tile_n, split_k = std::max(1, config.split_k);
    const int64_t columns = (problem.n + tile_n - 1) / tile_n * split_k * std::max<int64_t>(1, problem.batch_count);
    const int64_t rows_per_wave = std::max<int64_t>(1, multiprocessors / std::max<int64_t>(1, columns));
    const auto waves = [&](int64_t rows) { return (rows * columns + multiprocessors - 1) / multiprocessors; };
    // Tile rows within the first wave; then the last M of each full wave.
    for (int64_t rows = 1; rows <= rows_per_wave && rows * tile_m <= high; ++rows)
      if (rows * tile_m >= low) add(rows * tile_m, 1.0 / double(rows));
    for (int64_t wave = 1;; ++wave) {
      const int64_t rows = wave * multiprocessors / std::max<int64_t>(1, columns);
      const int64_t m = rows * tile_m;
      if (m > high) break;
      if (m >= low && rows > 0) add(m, double(waves(rows + 1)) / double(waves(rows)) - 1);
    }
  }
  std::vector<PredictedBoundary> ordered;
  for (const auto& [m, effect] : boundaries) ordered.push_back({m, effect});
  return ordered;
}

}  // namespace shapescope::profiler
