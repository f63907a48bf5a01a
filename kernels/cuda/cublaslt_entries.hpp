// The cuBLASLt registry entries (cublaslt_bf16, cublaslt_fp8_blockscale).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "kernels/cuda/cublaslt_matmul.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

void register_cublaslt_bf16();
void register_cublaslt_fp8_blockscale();
// cublaslt_nvfp4 and cublaslt_mxfp8, Blackwell's block-scaled GEMMs (cublaslt_block_scaled.cpp).
void register_cublaslt_block_scaled();
// cublaslt_fp8_blockscale_grouped_loop and cublaslt_bf16_grouped_loop (cublaslt_grouped_loop.cpp).
void register_cublaslt_grouped_loops();

// The matmuls behind the entries, for kernels that call cuBLASLt their own way (one call per expert).
// Block-scaled FP8: weight scales BLK128x128 (cublaslt_scale_layout.hpp), activation scales VEC128.
std::unique_ptr<CublasLtMatmul> make_cublaslt_fp8_matmul(cublasLtHandle_t handle, const GemmShape& shape,
                                                         const float* weight_scales, const float* activation_scales);
std::unique_ptr<CublasLtMatmul> make_cublaslt_bf16_matmul(cublasLtHandle_t handle, const GemmShape& shape);
// Why cuBLASLt's block-scaled FP8 cannot run a shape (M % 4, alignment, batches), or nothing.
std::optional<std::string> cublaslt_fp8_unsupported_reason(const GemmShape& shape);

// The fp8 entry's session. `pad_weight_scales` false stores the 128x128 scales
// unpadded (K-block rows ceil(K/128) apart): wrong whenever ceil(K/128) % 4 != 0;
// only the GPU test that demonstrates the layout rule asks for it.
std::unique_ptr<GemmSession> open_cublaslt_fp8_blockscale(Device& device, const WeightShape& shape, uint64_t seed,
                                                          bool pad_weight_scales = true);

}  // namespace shapescope::kernels::cuda
