#include "kernels/cuda/kernel_duration_timer.hpp"

#include <chrono>
#include <stdexcept>
#include <thread>

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {

namespace {
// CUPTI may hand over a finished kernel's record a little after the GPU is idle.
constexpr int kDeliveryTries = 50;
constexpr auto kDeliveryPause = std::chrono::milliseconds(1);
}  // namespace

KernelDurationTimer::KernelDurationTimer() = default;

void KernelDurationTimer::start() {
  CUDA_CHECK(cudaDeviceSynchronize());
  CuptiActivity::instance().take_finished();  // earlier work (warm-up, the flush) is not this region's
}

double KernelDurationTimer::elapsed_us() {
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<KernelActivity> records;
  for (int i = 0; i < kDeliveryTries && records.empty(); ++i) {
    if (i > 0) std::this_thread::sleep_for(kDeliveryPause);
    records = CuptiActivity::instance().take_finished();
  }
  if (records.empty()) throw std::runtime_error("kernel timing: CUPTI recorded no kernel for the timed run");
  double total_us = 0;
  launched_.clear();
  for (const KernelActivity& record : records) {
    total_us += record.duration_us();
    launched_ += (launched_.empty() ? "" : "; ") + record.name;
  }
  return total_us;
}

}  // namespace shapescope::kernels::cuda
