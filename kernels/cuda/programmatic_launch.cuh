// One launch of a kernel instance of ours, with programmatic dependent launch when asked (the kernel then waits
// for the previous grid before its first global access: hopper_ptx.cuh). Host code.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {

template <class Params>
void launch_kernel(void (*kernel)(Params), dim3 grid, dim3 block, std::size_t shared_bytes, const Params& params,
                   bool programmatic, cudaStream_t stream) {
  cudaLaunchConfig_t launch{};
  launch.gridDim = grid;
  launch.blockDim = block;
  launch.dynamicSmemBytes = shared_bytes;
  launch.stream = stream;
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  if (programmatic) {
    launch.attrs = &overlap;
    launch.numAttrs = 1;
  }
  CUDA_CHECK(cudaLaunchKernelEx(&launch, kernel, params));
}

}  // namespace shapescope::kernels::cuda
