#include "bench/self_check/self_check_estimate.hpp"

#include <algorithm>

namespace shapescope::self_check {

namespace {
constexpr double kPointOverheadSeconds = 3e-3;
constexpr double kCheckSecondsPerK = 1.1e-6;
constexpr double kKernelRuns = 7;  // 2 warm-up + 5 samples
constexpr double kSustainedFlops = 0.65 * 1979e12;
}  // namespace

double estimated_point_seconds(int64_t n, int64_t k, int64_t m) {
  const double kernel_seconds = 2.0 * double(m) * double(n) * double(k) / kSustainedFlops;
  return kPointOverheadSeconds + std::max(kCheckSecondsPerK * double(k), kKernelRuns * kernel_seconds);
}

double estimated_shape_seconds(int64_t n, int64_t k, const std::vector<int64_t>& m_values, int kernels) {
  double seconds = 0;
  for (const int64_t m : m_values) seconds += estimated_point_seconds(n, k, m);
  return kernels * (seconds + kEstimatedFileOpenSeconds);
}

}  // namespace shapescope::self_check
