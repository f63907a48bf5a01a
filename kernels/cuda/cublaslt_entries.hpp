// The cuBLASLt registry entries (cublaslt_bf16, cublaslt_fp8_blockscale).
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

void register_cublaslt_bf16();
void register_cublaslt_fp8_blockscale();

// The fp8 entry's session. `pad_weight_scales` false stores the 128x128 scales
// unpadded (K-block rows ceil(K/128) apart): wrong whenever ceil(K/128) % 4 != 0;
// only the GPU test that demonstrates the layout rule asks for it.
std::unique_ptr<GemmSession> open_cublaslt_fp8_blockscale(Device& device, const WeightShape& shape, uint64_t seed,
                                                          bool pad_weight_scales = true);

}  // namespace shapescope::kernels::cuda
