// Device memory for DeviceBuffer, kept for reuse once released. A sweep frees and allocates activations and
// outputs of nearly the same size at every M, and cudaMalloc plus cudaFree (which waits for the device and
// unmaps) took ~0.6 ms of a point's ~3.4 ms overhead on an H100. Sizes are rounded up to one of eight classes
// per power of two, so the buffers of neighbouring Ms share a class at the cost of at most 1/8 more memory.
// Cached memory counts as free (CudaDevice::free_memory_bytes). It goes back to the driver when cudaMalloc
// runs out, beyond an eighth of the device's memory (oldest first) and when the device is closed.
#pragma once

#include <cstddef>

namespace shapescope::kernels::cuda {

struct DeviceBlock {
  void* data = nullptr;
  std::size_t bytes = 0;  // as allocated: the class of the bytes asked for, or exactly those when memory is short
  int device = -1;
};

// The allocation size of a request: the smallest of 2^e * (8 + i) / 8 (i = 0..7) that holds it, or the request
// itself below 4 KiB.
std::size_t device_block_class(std::size_t bytes);
// On the current device; throws (as CUDA_CHECK does) when memory is short even after the cache is emptied.
DeviceBlock allocate_device_block(std::size_t bytes);
// Waits for the block's device first, as cudaFree would, so no queued work still uses the block.
void release_device_block(const DeviceBlock& block) noexcept;
std::size_t cached_device_bytes(int device);
void free_cached_device_blocks(int device) noexcept;

}  // namespace shapescope::kernels::cuda
