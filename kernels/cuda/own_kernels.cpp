#include "kernels/cuda/own_kernels.hpp"

#include "kernels/cuda/own_kernel_entries.hpp"

namespace shapescope::kernels::cuda {

void register_own_cuda_kernels() {
  register_kernel(fp8_blockscale_entry());
  register_kernel(fp8_blockscale_bpreshuffle_entry());
  register_kernel(a16w8_blockscale_batched_entry());
  register_kernel(a16w4_blockscale_entry());
  register_kernel(a16w4_tiled_entry());
  register_kernel(mxfp8_blockscale_entry());
  register_kernel(mxfp8_dequantized_bf16_entry());
  register_kernel(portable_fp8_blockscale_entry());
  register_kernel(portable_fp8_blockscale_bpreshuffle_entry());
  register_grouped_kernel(fp8_blockscale_grouped_entry());
  register_grouped_kernel(a16w4_blockscale_grouped_entry());
  register_grouped_kernel(a16w4_tiled_grouped_entry());
}

}  // namespace shapescope::kernels::cuda
