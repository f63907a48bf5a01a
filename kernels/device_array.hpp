// An owning, typed allocation of device memory, movable and not copyable, over a backend's `Memory`: a type with
// `Memory::Block` (value-initialized: nothing held), `static Block allocate(std::size_t bytes)`,
// `static void release(const Block&) noexcept` (nothing for an empty block) and `static void* address(const Block&)`.
// The CUDA backend's DeviceBuffer and the HIP backend's HipBuffer.
#pragma once

#include <cstddef>
#include <utility>

namespace shapescope::kernels {

template <typename T, typename Memory>
class DeviceArray {
 public:
  using Block = typename Memory::Block;

  DeviceArray() = default;
  explicit DeviceArray(std::size_t count) : count_(count) {
    if (count_ > 0) block_ = Memory::allocate(count_ * sizeof(T));
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& other) noexcept
      : block_(std::exchange(other.block_, Block{})), count_(std::exchange(other.count_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    if (this != &other) {
      Memory::release(block_);
      block_ = std::exchange(other.block_, Block{});
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  ~DeviceArray() { Memory::release(block_); }

  T* data() const { return static_cast<T*>(Memory::address(block_)); }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  Block block_{};
  std::size_t count_ = 0;
};

}  // namespace shapescope::kernels
