// The device memory cache behind DeviceBuffer on a real GPU: released blocks come back for requests of their
// class, count as free memory, and go back to the driver with the device. Each test skips without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_device.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_memory_cache.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace shapescope::kernels::cuda {
namespace {

TEST(DeviceBlockClass, HoldsTheRequestWithAtMostAnEighthMore) {
  for (std::size_t bytes : {std::size_t(1), std::size_t(4095), std::size_t(4096), std::size_t(5000),
                            std::size_t(1) << 20, (std::size_t(1) << 20) + 1, std::size_t(117440512),
                            std::size_t(117440512) + 16 * 14336 * 2, std::size_t(3) << 33}) {
    const std::size_t allocated = device_block_class(bytes);
    EXPECT_GE(allocated, bytes);
    EXPECT_LE(double(allocated), double(bytes) * 1.125 + 1) << bytes;
    EXPECT_EQ(device_block_class(allocated), allocated) << bytes;  // a class is its own class
  }
  // The outputs of neighbouring Ms of a sweep (M=4000 and 4016, N=14336, bf16) share a class.
  EXPECT_EQ(device_block_class(4000ull * 14336 * 2), device_block_class(4016ull * 14336 * 2));
}

TEST(DeviceMemoryCache, AReleasedBlockServesTheNextRequestOfItsClassAndCountsAsFree) {
  std::unique_ptr<Device> device = open_device();
  REQUIRE_GPU(device);
  CudaDevice& cuda = as_cuda_device(*device);
  const std::size_t cached_before = cached_device_bytes(cuda.ordinal());
  void* first = nullptr;
  {
    DeviceBuffer<uint16_t> output(4000 * 14336);
    first = output.data();
    CUDA_CHECK(cudaMemsetAsync(output.data(), 0x5A, output.bytes(), cuda.stream()));  // in flight at release
  }
  const std::size_t kept = device_block_class(std::size_t(4000) * 14336 * 2);
  EXPECT_EQ(cached_device_bytes(cuda.ordinal()), cached_before + kept);
  {
    DeviceBuffer<uint16_t> next(4016 * 14336);  // the next M's output: same class, same memory
    EXPECT_EQ(next.data(), first);
    EXPECT_EQ(cached_device_bytes(cuda.ordinal()), cached_before);
    DeviceBuffer<uint16_t> larger(8192 * 14336);  // another class: fresh memory
    EXPECT_NE(larger.data(), first);
  }
  EXPECT_GE(device->free_memory_bytes(), cached_device_bytes(cuda.ordinal()));
  free_cached_device_blocks(cuda.ordinal());
  EXPECT_EQ(cached_device_bytes(cuda.ordinal()), 0u);
}

TEST(DeviceMemoryCache, ClosingTheDeviceGivesItsCachedMemoryBack) {
  int ordinal = -1;
  {
    std::unique_ptr<Device> device = open_device();
    REQUIRE_GPU(device);
    ordinal = as_cuda_device(*device).ordinal();
    { DeviceBuffer<uint8_t> scratch(std::size_t(64) << 20); }
    EXPECT_GE(cached_device_bytes(ordinal), std::size_t(64) << 20);
  }
  EXPECT_EQ(cached_device_bytes(ordinal), 0u);
}

}  // namespace
}  // namespace shapescope::kernels::cuda
