// The registry entries of the HIP backend's kernels, one per file; hip_backend.hip registers them.
#pragma once

#include "kernels/kernel.hpp"

namespace shapescope::kernels::rocm {

KernelEntry hip_fp8_blockscale_entry();              // hip_fp8_blockscale.hip
KernelEntry hip_fp8_blockscale_bpreshuffle_entry();  // hip_fp8_blockscale.hip

}  // namespace shapescope::kernels::rocm
