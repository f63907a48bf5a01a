#include "kernels/cuda/graph_sequence.hpp"

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {

GraphSequence::GraphSequence(CudaDevice& device, const std::vector<PreparedGemm*>& runs)
    : stream_(device.stream()) {
  cudaGraph_t graph = nullptr;
  // Thread-local capture: other host threads may use CUDA meanwhile.
  CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  try {
    for (PreparedGemm* run : runs) run->run();
  } catch (...) {
    cudaStreamEndCapture(stream_, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
  const cudaError_t instantiated = cudaGraphInstantiate(&graph_, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_CHECK(instantiated);
  CUDA_CHECK(cudaGraphUpload(graph_, stream_));
  CUDA_CHECK(cudaEventCreate(&start_));
  CUDA_CHECK(cudaEventCreate(&stop_));
}

GraphSequence::~GraphSequence() {
  cudaStreamSynchronize(stream_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (graph_) cudaGraphExecDestroy(graph_);
}

double GraphSequence::replay_us() {
  CUDA_CHECK(cudaEventRecord(start_, stream_));
  CUDA_CHECK(cudaGraphLaunch(graph_, stream_));
  CUDA_CHECK(cudaEventRecord(stop_, stream_));
  CUDA_CHECK(cudaEventSynchronize(stop_));
  float milliseconds = 0;
  CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start_, stop_));
  return double(milliseconds) * 1000.0;
}

}  // namespace shapescope::kernels::cuda
