// The CPU backend's registry entries (registered by register_cpu_kernels()).
#pragma once

#include "kernels/grouped_gemm.hpp"
#include "kernels/kernel.hpp"

#include <string>
#include <vector>

namespace shapescope::kernels::cpu {

KernelEntry cpu_fp8_blockscale_entry();
KernelEntry cpu_a16w8_blockscale_entry();
KernelEntry cpu_bf16_entry();
GroupedKernelEntry cpu_fp8_blockscale_grouped_entry();
KernelEntry cpu_a16w4_blockscale_entry();
KernelEntry cpu_mxfp8_blockscale_entry();
GroupedKernelEntry cpu_a16w4_blockscale_grouped_entry();
// The formats text of the a16w4 kernels.
std::string a16w4_formats_text();

// Achieved TFLOP/s of a large Eigen sgemm on `threads` threads: the CPU's MFU peak.
double measure_sgemm_peak_tflops(int threads);

}  // namespace shapescope::kernels::cpu
