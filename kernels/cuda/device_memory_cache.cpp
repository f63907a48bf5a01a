#include "kernels/cuda/device_memory_cache.hpp"

#include <cuda_runtime.h>

#include <bit>
#include <list>
#include <map>
#include <mutex>

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {
namespace {

constexpr std::size_t kSmallestClassed = 4096;
constexpr std::size_t kClassesPerPowerOfTwo = 8;
constexpr std::size_t kCachedShareOfMemory = 8;  // at most 1/8 of the device's memory stays cached

// Runs `work` with `device` current, then puts the previous device back.
template <class Work>
void on_device(int device, const Work& work) noexcept {
  int current = -1;
  const bool switch_device = cudaGetDevice(&current) == cudaSuccess && current != device;
  if (switch_device) cudaSetDevice(device);
  work();
  if (switch_device) cudaSetDevice(current);
}

struct DeviceCache {
  std::list<DeviceBlock> blocks;  // released blocks, oldest first
  std::size_t cached_bytes = 0;
  std::size_t limit_bytes = 0;
};

class Cache {
 public:
  bool take(int device, std::size_t bytes, DeviceBlock& block) {
    const std::lock_guard lock(mutex_);
    DeviceCache& cache = devices_[device];
    for (auto it = cache.blocks.rbegin(); it != cache.blocks.rend(); ++it) {  // the newest fitting block
      if (it->bytes != bytes) continue;
      block = *it;
      cache.cached_bytes -= block.bytes;
      cache.blocks.erase(std::next(it).base());
      return true;
    }
    return false;
  }
  void keep(const DeviceBlock& block) {
    const std::lock_guard lock(mutex_);
    DeviceCache& cache = devices_[block.device];
    if (cache.limit_bytes == 0) {
      std::size_t free = 0, total = 0;
      on_device(block.device, [&] { cudaMemGetInfo(&free, &total); });
      cache.limit_bytes = total / kCachedShareOfMemory;
    }
    cache.blocks.push_back(block);
    cache.cached_bytes += block.bytes;
    while (cache.cached_bytes > cache.limit_bytes && !cache.blocks.empty()) {
      const DeviceBlock oldest = cache.blocks.front();
      cache.blocks.pop_front();
      cache.cached_bytes -= oldest.bytes;
      on_device(oldest.device, [&] { cudaFree(oldest.data); });
    }
  }
  std::size_t cached_bytes(int device) {
    const std::lock_guard lock(mutex_);
    const auto found = devices_.find(device);
    return found == devices_.end() ? 0 : found->second.cached_bytes;
  }
  void free_all(int device) {
    const std::lock_guard lock(mutex_);
    DeviceCache& cache = devices_[device];
    on_device(device, [&] {
      for (const DeviceBlock& block : cache.blocks) cudaFree(block.data);
    });
    cache.blocks.clear();
    cache.cached_bytes = 0;
  }

 private:
  std::mutex mutex_;
  std::map<int, DeviceCache> devices_;
};

// Never destroyed: buffers of static lifetime may be released while the process exits.
Cache& cache() {
  static Cache* const instance = new Cache;
  return *instance;
}

}  // namespace

std::size_t device_block_class(std::size_t bytes) {
  if (bytes < kSmallestClassed) return bytes;
  // The class step is 1/8 of the power of two at or below the request.
  const std::size_t power = std::bit_floor(bytes);
  const std::size_t step = power / kClassesPerPowerOfTwo;
  return (bytes + step - 1) / step * step;
}

DeviceBlock allocate_device_block(std::size_t bytes) {
  DeviceBlock block;
  CUDA_CHECK(cudaGetDevice(&block.device));
  block.bytes = device_block_class(bytes);
  if (cache().take(block.device, block.bytes, block)) return block;
  cudaError_t error = cudaMalloc(&block.data, block.bytes);
  if (error == cudaErrorMemoryAllocation) {  // memory is short: give the cache back, then ask for exactly `bytes`
    cudaGetLastError();
    free_cached_device_blocks(block.device);
    error = cudaMalloc(&block.data, block.bytes);
    if (error == cudaErrorMemoryAllocation && block.bytes != bytes) {
      cudaGetLastError();
      block.bytes = bytes;
      error = cudaMalloc(&block.data, block.bytes);
    }
  }
  if (error != cudaSuccess) {
    cudaGetLastError();  // an allocation failure is not sticky; leave no error behind for later calls
    throw_cuda_error(error, "cudaMalloc", __FILE__, __LINE__);
  }
  return block;
}

void release_device_block(const DeviceBlock& block) noexcept {
  if (!block.data) return;
  bool idle = false;
  on_device(block.device, [&] { idle = cudaDeviceSynchronize() == cudaSuccess; });
  if (!idle) {  // a failed device: give the block back rather than hand it out again
    on_device(block.device, [&] { cudaFree(block.data); });
    return;
  }
  try {
    cache().keep(block);
  } catch (...) {  // no memory for the list node: give the block back
    on_device(block.device, [&] { cudaFree(block.data); });
  }
}

std::size_t cached_device_bytes(int device) { return cache().cached_bytes(device); }

void free_cached_device_blocks(int device) noexcept {
  try {
    cache().free_all(device);
  } catch (...) {  // the lock failed: the driver frees the blocks with the context
  }
}

}  // namespace shapescope::kernels::cuda
