#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels {

void register_cpu_kernels() {
  register_kernel(cpu::cpu_fp8_blockscale_entry());
  register_kernel(cpu::cpu_a16w8_blockscale_entry());
  register_kernel(cpu::cpu_bf16_entry());
  register_kernel(cpu::cpu_a16w4_blockscale_entry());
  register_kernel(cpu::cpu_mxfp8_blockscale_entry());
  register_grouped_kernel(cpu::cpu_fp8_blockscale_grouped_entry());
  register_grouped_kernel(cpu::cpu_a16w4_blockscale_grouped_entry());
}

}  // namespace shapescope::kernels
