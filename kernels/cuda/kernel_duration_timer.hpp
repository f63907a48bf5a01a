// Timing mode `kernel`: the sum of the GPU durations of every kernel (and memset) a
// region launched, as CUPTI recorded them; what Nsight Systems and kineto report. The
// cache flush enqueued before start() has finished by then (start() synchronizes), so
// only the region's own work is counted; host gaps between its launches are not.
#pragma once

#include <string>

#include "kernels/cuda/cuda_device.hpp"
#include "kernels/cuda/cupti_activity.hpp"

namespace shapescope::kernels::cuda {

class KernelDurationTimer final : public Timer {
 public:
  KernelDurationTimer();
  void start() override;
  void stop() override {}
  double elapsed_us() override;
  std::string launched() const override { return launched_; }

 private:
  CuptiActivity::Tracing tracing_;
  std::string launched_;
};

}  // namespace shapescope::kernels::cuda
