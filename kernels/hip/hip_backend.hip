// The HIP backend's hooks in kernels/kernel.hpp: its device and its kernels.
#include <memory>
#include <string>

#include "kernels/hip/hip_device.hpp"
#include "kernels/hip/hip_kernel_entries.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels {

void register_hip_kernels() {
  register_kernel(rocm::hip_fp8_blockscale_entry());
  register_kernel(rocm::hip_fp8_blockscale_bpreshuffle_entry());
#if SHAPESCOPE_HAVE_HIPBLASLT
  register_kernel(rocm::hipblaslt_bf16_entry());
#endif
}

bool hip_backend_compiled() { return true; }

std::string hip_unavailable_reason() {
  int count = 0;
  const hipError_t status = hipGetDeviceCount(&count);
  if (status != hipSuccess) return std::string("no usable AMD GPU: ") + hipGetErrorString(status);
  if (count == 0) return "no AMD GPU visible (HIP_VISIBLE_DEVICES?)";
  return "";
}

std::unique_ptr<Device> make_hip_device() {
  if (!hip_unavailable_reason().empty()) return nullptr;
  return std::make_unique<rocm::HipDevice>(0);
}

}  // namespace shapescope::kernels
