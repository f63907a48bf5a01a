#include "kernels/cuda/stream_hold.hpp"

#include <atomic>
#include <new>

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {

StreamHolder::StreamHolder(std::uint64_t timeout_ns) : timeout_ns_(timeout_ns) {
  void* words = nullptr;
  CUDA_CHECK(cudaHostAlloc(&words, sizeof(StreamHoldWords), cudaHostAllocMapped));
  host_words_ = new (words) StreamHoldWords{};
  void* device_words = nullptr;
  const cudaError_t mapped = cudaHostGetDevicePointer(&device_words, words, 0);
  if (mapped != cudaSuccess) {
    cudaFreeHost(words);
    throw_cuda_error(mapped, "cudaHostGetDevicePointer(&device_words, words, 0)", __FILE__, __LINE__);
  }
  device_words_ = static_cast<StreamHoldWords*>(device_words);
}

StreamHolder::~StreamHolder() {
  release();  // a hold still queued ends at once rather than at its timeout
  cudaFreeHost(host_words_);
}

void StreamHolder::hold(cudaStream_t stream) { launch_stream_hold(device_words_, ++holds_, timeout_ns_, stream); }

void StreamHolder::release() noexcept {
  std::atomic_ref<std::uint64_t>(host_words_->released).store(holds_, std::memory_order_release);
}

long long StreamHolder::timed_out_holds() const {
  return static_cast<long long>(std::atomic_ref<std::uint64_t>(host_words_->timed_out).load(std::memory_order_acquire));
}

}  // namespace shapescope::kernels::cuda
