#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/globaltimer.cuh"
#include "kernels/cuda/stream_hold.hpp"

namespace shapescope::kernels::cuda {

namespace {

// An acquire load at system scope: it sees the host's release store, and is read again on every call.
__device__ __forceinline__ std::uint64_t load_acquire_system(const std::uint64_t* address) {
  std::uint64_t value;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

// Holds run one after another on their stream, so `timed_out` has one writer at a time.
__global__ void stream_hold_kernel(StreamHoldWords* words, std::uint64_t hold, std::uint64_t timeout_ns) {
  const std::uint64_t start_ns = globaltimer_ns();
  while (load_acquire_system(&words->released) < hold) {
    if (globaltimer_ns() - start_ns >= timeout_ns) {
      volatile std::uint64_t* timed_out = &words->timed_out;
      *timed_out = *timed_out + 1;
      __threadfence_system();
      return;
    }
  }
}

}  // namespace

void launch_stream_hold(StreamHoldWords* words, std::uint64_t hold, std::uint64_t timeout_ns, cudaStream_t stream) {
  stream_hold_kernel<<<1, 1, 0, stream>>>(words, hold, timeout_ns);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace shapescope::kernels::cuda
