// The few spellings in which CUDA and HIP differ, so one kernel source compiles with nvcc
// and with hipcc. Our own header on purpose: HIP's NVIDIA-platform headers do not build with
// CUDA 13's nvcc. Everything else a portable kernel uses (__global__, __shared__, threadIdx,
// __syncthreads, __launch_bounds__, <<<grid, block, shared, stream>>>) is spelled alike.
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#error "kernels/portable/ holds device code: include it from a .cu (nvcc) or .hip (hipcc) file"
#endif

#include <stdexcept>
#include <string>

namespace shapescope::gpu {

#if defined(__HIPCC__)
using Stream = hipStream_t;
inline std::string last_launch_error() {
  const hipError_t error = hipGetLastError();
  return error == hipSuccess ? std::string() : std::string(hipGetErrorString(error));
}
#else
using Stream = cudaStream_t;
inline std::string last_launch_error() {
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? std::string() : std::string(cudaGetErrorString(error));
}
#endif

// Throws naming `kernel` when its launch was refused (bad configuration, no code for this GPU).
inline void check_launch(const char* kernel) {
  const std::string error = last_launch_error();
  if (!error.empty()) throw std::runtime_error(std::string(kernel) + " launch failed: " + error);
}

}  // namespace shapescope::gpu
