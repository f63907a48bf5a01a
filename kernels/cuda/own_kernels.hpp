// The hook through which our own CUDA kernels (fp8_blockscale, its pre-shuffled
// variant, a16w8_blockscale_batched) join the registry. Declared here by the
// CUDA backend, defined by the kernels' owner; register_cuda_kernels() calls it.
#pragma once

namespace shapescope::kernels::cuda {

void register_own_cuda_kernels();

}  // namespace shapescope::kernels::cuda
