#include "kernels/cuda/graph_batches.hpp"

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {

GraphBatches::~GraphBatches() {
  for (auto& [launches, graph] : graphs_) cudaGraphExecDestroy(graph);
}

cudaGraphExec_t GraphBatches::get(PreparedGemm& gemm, int launches, cudaStream_t stream) {
  if (auto found = graphs_.find(launches); found != graphs_.end()) return found->second;
  cudaGraph_t graph = nullptr;
  // Thread-local capture: other host threads may use CUDA meanwhile.
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < launches; ++i) gemm.run();
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_CHECK(instantiated);
  CUDA_CHECK(cudaGraphUpload(exec, stream));
  graphs_.emplace(launches, exec);
  return exec;
}

}  // namespace shapescope::kernels::cuda
