// A RunSequence on the GPU: the runs captured once into a CUDA graph on the device's
// stream, replayed with an event on either side. A graph launch has no per-kernel
// launch gaps, as in a serving engine's decode step.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "kernels/cuda/cuda_device.hpp"

namespace shapescope::kernels::cuda {

class GraphSequence final : public RunSequence {
 public:
  GraphSequence(CudaDevice& device, const std::vector<PreparedGemm*>& runs);
  ~GraphSequence() override;
  GraphSequence(const GraphSequence&) = delete;
  GraphSequence& operator=(const GraphSequence&) = delete;
  double replay_us() override;

 private:
  cudaStream_t stream_;
  cudaGraphExec_t graph_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace shapescope::kernels::cuda
