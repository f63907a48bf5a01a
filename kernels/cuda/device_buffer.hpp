// An owning, typed allocation of plain device memory (never managed), from device_memory_cache.hpp.
#pragma once

#include <cstddef>

#include "kernels/cuda/device_memory_cache.hpp"
#include "kernels/device_array.hpp"

namespace shapescope::kernels::cuda {

struct CachedDeviceMemory {
  using Block = DeviceBlock;
  static Block allocate(std::size_t bytes) { return allocate_device_block(bytes); }
  static void release(const Block& block) noexcept { release_device_block(block); }
  static void* address(const Block& block) { return block.data; }
};

template <typename T>
using DeviceBuffer = DeviceArray<T, CachedDeviceMemory>;

}  // namespace shapescope::kernels::cuda
