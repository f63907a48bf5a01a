// The registry entries of the HIP backend's kernels, one per file; hip_backend.hip registers them.
#pragma once

#include "kernels/kernel.hpp"

namespace shapescope::kernels::rocm {

KernelEntry hip_fp8_blockscale_entry();              // hip_fp8_blockscale.hip
KernelEntry hip_fp8_blockscale_bpreshuffle_entry();  // hip_fp8_blockscale.hip
#if SHAPESCOPE_HAVE_HIPBLASLT
KernelEntry hipblaslt_bf16_entry();                  // hipblaslt/hipblaslt_bf16.hip, built when hipBLASLt is found
#endif

}  // namespace shapescope::kernels::rocm
