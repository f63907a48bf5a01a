// One launch of a grid-stride kernel over `count` elements (the operand fillers and the output gather): 256
// threads a block and at most 65535 blocks, the kernel striding over the rest, so multi-gigabyte buffers keep a
// small grid. Host code, for .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {

constexpr int kGridStrideThreads = 256;

// kernel<<<...>>>(args...) on `stream`; nothing for no elements.
template <typename... Params, typename... Args>
void launch_grid_stride(void (*kernel)(Params...), int64_t count, cudaStream_t stream, const Args&... args) {
  if (count == 0) return;
  const int64_t blocks = (count + kGridStrideThreads - 1) / kGridStrideThreads;
  kernel<<<unsigned(std::clamp<int64_t>(blocks, 1, 65535)), kGridStrideThreads, 0, stream>>>(args...);
  CUDA_CHECK_LAUNCH();
}

}  // namespace shapescope::kernels::cuda
