// The registry entries of our own CUDA kernels, one per file; own_kernels.cpp registers them.
#pragma once

#include "kernels/grouped_gemm.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

KernelEntry fp8_blockscale_entry();              // fp8_blockscale.cu
KernelEntry fp8_blockscale_bpreshuffle_entry();  // fp8_blockscale_bpreshuffle.cu
KernelEntry a16w8_blockscale_batched_entry();    // a16w8_blockscale_batched.cu
KernelEntry a16w4_blockscale_entry();            // a16w4_blockscale.cu
KernelEntry a16w4_tiled_entry();                 // a16w4_tiled.cu
KernelEntry mxfp8_blockscale_entry();            // mxfp8_blockscale.cu
KernelEntry mxfp8_dequantized_bf16_entry();      // mxfp8_dequantized_bf16.cpp
KernelEntry portable_fp8_blockscale_entry();     // portable_fp8_blockscale.cu
KernelEntry portable_fp8_blockscale_bpreshuffle_entry();  // portable_fp8_blockscale.cu
GroupedKernelEntry fp8_blockscale_grouped_entry();  // fp8_blockscale_grouped.cu
GroupedKernelEntry a16w4_blockscale_grouped_entry();  // a16w4_blockscale_grouped.cu
GroupedKernelEntry a16w4_tiled_grouped_entry();  // a16w4_tiled_grouped.cu

}  // namespace shapescope::kernels::cuda
