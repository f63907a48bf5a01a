// HIP_CHECK: a failed HIP runtime call throws std::runtime_error naming the call and HIP's message.
#pragma once

#include <hip/hip_runtime.h>

#include <stdexcept>
#include <string>

namespace shapescope::kernels::rocm {

inline void check_hip(hipError_t status, const char* call, const char* file, int line) {
  if (status != hipSuccess)
    throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                             hipGetErrorString(status));
}

}  // namespace shapescope::kernels::rocm

#define HIP_CHECK(call) ::shapescope::kernels::rocm::check_hip((call), #call, __FILE__, __LINE__)
