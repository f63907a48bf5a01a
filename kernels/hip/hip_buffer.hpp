// An owning, typed hipMalloc allocation.
#pragma once

#include <hip/hip_runtime.h>

#include <cstddef>

#include "kernels/device_array.hpp"
#include "kernels/hip/hip_check.hpp"

namespace shapescope::kernels::rocm {

struct HipMemory {
  using Block = void*;
  static Block allocate(std::size_t bytes) {
    void* data = nullptr;
    HIP_CHECK(hipMalloc(&data, bytes));
    return data;
  }
  static void release(const Block& data) noexcept {
    if (data) (void)hipFree(data);  // no throw from a destructor; a failed free leaks at worst
  }
  static void* address(const Block& data) { return data; }
};

template <typename T>
using HipBuffer = DeviceArray<T, HipMemory>;

}  // namespace shapescope::kernels::rocm
