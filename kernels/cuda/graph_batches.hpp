// CUDA graphs of N back-to-back runs of one PreparedGemm, captured once per N and
// replayed by CudaDevice::time_batched: a graph launch has no per-kernel launch gaps.
#pragma once

#include <cuda_runtime.h>

#include <map>

#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

class GraphBatches {
 public:
  GraphBatches() = default;
  GraphBatches(const GraphBatches&) = delete;
  GraphBatches& operator=(const GraphBatches&) = delete;
  ~GraphBatches();
  // The graph of `launches` runs of `gemm`, captured on `stream` the first time it is asked for.
  cudaGraphExec_t get(PreparedGemm& gemm, int launches, cudaStream_t stream);

 private:
  std::map<int, cudaGraphExec_t> graphs_;
};

// A PreparedGemm that keeps its own graphs (they die with the buffers they point at).
class GraphBatchedGemm {
 public:
  virtual ~GraphBatchedGemm() = default;
  virtual GraphBatches& graph_batches() = 0;
};

}  // namespace shapescope::kernels::cuda
