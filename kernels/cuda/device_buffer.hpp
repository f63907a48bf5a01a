// An owning, typed allocation of plain device memory (never managed), from device_memory_cache.hpp.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda/device_memory_cache.hpp"

namespace shapescope::kernels::cuda {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) block_ = allocate_device_block(count_ * sizeof(T));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : block_(std::exchange(other.block_, DeviceBlock{})), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release_device_block(block_);
      block_ = std::exchange(other.block_, DeviceBlock{});
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release_device_block(block_); }

  T* data() const { return static_cast<T*>(block_.data); }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  DeviceBlock block_;
  std::size_t count_ = 0;
};

}  // namespace shapescope::kernels::cuda
