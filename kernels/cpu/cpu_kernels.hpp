// The CPU backend's registry entries (registered by register_cpu_kernels()).
#pragma once

#include "kernels/grouped_gemm.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels::cpu {

KernelEntry cpu_fp8_blockscale_entry();
KernelEntry cpu_a16w8_blockscale_entry();
KernelEntry cpu_bf16_entry();
GroupedKernelEntry cpu_fp8_blockscale_grouped_entry();

// Achieved TFLOP/s of a large Eigen sgemm on `threads` threads: the CPU's MFU peak.
double measure_sgemm_peak_tflops(int threads);

}  // namespace shapescope::kernels::cpu
