// An owning, typed hipMalloc allocation.
#pragma once

#include <hip/hip_runtime.h>

#include <cstddef>
#include <utility>

#include "kernels/hip/hip_check.hpp"

namespace shapescope::kernels::rocm {

template <typename T>
class HipBuffer {
 public:
  HipBuffer() = default;
  explicit HipBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) HIP_CHECK(hipMalloc(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
  }
  HipBuffer(const HipBuffer&) = delete;
  HipBuffer& operator=(const HipBuffer&) = delete;
  HipBuffer(HipBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  HipBuffer& operator=(HipBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  ~HipBuffer() { release(); }

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void release() noexcept {
    if (data_) (void)hipFree(data_);  // no throw from a destructor; a failed free leaks at worst
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace shapescope::kernels::rocm
