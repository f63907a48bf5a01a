// Several prepared GEMMs run as one unit, for verifying split plans: back to back
// on the device's stream, or spread over two streams (a fork/join with events, so
// it also captures into a graph). Timing the unit times the whole decomposition.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "kernels/cuda/cuda_device.hpp"

namespace shapescope::kernels::cuda {

enum class GroupLaunch { serial, two_streams };

class GemmGroup final : public PreparedGemm {
 public:
  // The parts must outlive the group.
  GemmGroup(Device& device, std::vector<PreparedGemm*> parts, GroupLaunch launch);
  ~GemmGroup() override;
  GemmGroup(const GemmGroup&) = delete;
  GemmGroup& operator=(const GemmGroup&) = delete;

  void run() override;
  // Each part checks itself; the group reports the worst rel_err and all unwritten elements.
  CheckResult check() override;
  std::string launch_name() const override;
  double min_bytes() const override;

 private:
  CudaDevice& device_;
  std::vector<PreparedGemm*> parts_;
  GroupLaunch launch_;
  cudaStream_t side_stream_ = nullptr;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
};

}  // namespace shapescope::kernels::cuda
