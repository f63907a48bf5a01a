// cpu_mxfp8_blockscale: MXFP8 on both sides (e4m3 with an e8m0 scale per 1x32 along K), each operand
// dequantized inside the run (cpu_scaled_gemm), fp32 accumulation.
#include <fmt/format.h>

#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_scaled_gemm.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cpu {

KernelEntry cpu_mxfp8_blockscale_entry() {
  KernelEntry entry = cpu_entry({.name = "cpu_mxfp8_blockscale", .dtype = "fp8",
                                  .formats = "A e4m3 e8m0 per 1x32, B e4m3 e8m0 per 1x32, C bf16",
                                  .formats_taken = {BlockFormatId::mxfp8},
                                  .description = "both operands dequantized inside the run, Eigen sgemm, fp32 "
                                                 "accumulation"});
  entry.describe_config = [](const GemmShape& shape) {
    return fmt::format("{} tiles of M{}xN{}, A and B dequantized per 32 K columns",
                       synthetic::blocks(shape.n, kTileN) * shape.batch_count, shape.m, kTileN);
  };
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    return open_scaled_session("cpu_mxfp8_blockscale", OperandFormat::mxfp8, shape, seed,
                               device.info().multiprocessors);
  };
  return entry;
}

}  // namespace shapescope::kernels::cpu
