// Every CUDA runtime and cuBLAS(Lt) return code is checked: a failure throws
// std::runtime_error naming file:line, the call and the library's error string.
// An exit code of 0 proves nothing on a GPU, so launches are checked too.
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace shapescope::kernels::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                           cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")");
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                           cublasGetStatusName(status) + " (" + cublasGetStatusString(status) + ")");
}

}  // namespace shapescope::kernels::cuda

#define CUDA_CHECK(call)                                                                       \
  do {                                                                                         \
    const cudaError_t cuda_check_error_ = (call);                                              \
    if (cuda_check_error_ != cudaSuccess)                                                      \
      ::shapescope::kernels::cuda::throw_cuda_error(cuda_check_error_, #call, __FILE__, __LINE__); \
  } while (0)

#define CUBLAS_CHECK(call)                                                                          \
  do {                                                                                              \
    const cublasStatus_t cublas_check_status_ = (call);                                             \
    if (cublas_check_status_ != CUBLAS_STATUS_SUCCESS)                                              \
      ::shapescope::kernels::cuda::throw_cublas_error(cublas_check_status_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<...>>> launch: a bad configuration shows up only through the last error.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
