#include "kernels/cpu/parallel_for.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "common/interrupt.hpp"

namespace shapescope::kernels::cpu {

void parallel_for(int threads, int64_t count, const std::function<void(int64_t)>& body) {
  // With OpenMP linked, Eigen would otherwise start its own threads inside ours.
  static const bool eigen_serial = [] {
    Eigen::setNbThreads(1);
    return true;
  }();
  (void)eigen_serial;

  const int workers = int(std::clamp<int64_t>(count, 1, std::max(1, threads)));
  std::atomic<int64_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (int64_t i = next++; i < count; i = next++) {
      // A large GEMM runs for seconds: after SIGINT/SIGTERM the rest is skipped (the sweep drops the point).
      if (interrupt_requested()) {
        next = count;
        break;
      }
      try {
        body(i);
      } catch (...) {
        std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = count;  // stop handing out work
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(size_t(workers - 1));
  for (int t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace shapescope::kernels::cpu
