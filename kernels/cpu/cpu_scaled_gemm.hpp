// The dense CPU GEMM of the block-scaled formats with 1 x block_k scales (the a16w4 and mxfp8 kernels): the
// weights stay packed as the format stores them and every run dequantizes them 128 K columns at a time right
// before an Eigen sgemm, as the GPU kernels dequantize in registers; bf16 activations are widened to float,
// block-scaled ones (mxfp8) dequantized, inside the run too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/kernel.hpp"
#include "kernels/operand_format.hpp"

namespace shapescope::kernels::cpu {

// `kernel` names the launch ("cpu_a16w4_blockscale").
std::unique_ptr<GemmSession> open_scaled_session(const std::string& kernel, OperandFormat format,
                                                 const WeightShape& shape, uint64_t seed, int threads);

}  // namespace shapescope::kernels::cpu
