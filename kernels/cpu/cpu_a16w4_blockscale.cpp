// cpu_a16w4_blockscale: bf16 activations, FP4 (e2m1) weights in the MXFP4, NVFP4 or e2m1_e8m0_16 layout,
// dequantized per 128 K columns inside the run (cpu_scaled_gemm), fp32 accumulation: W4A16 as Hopper serves
// FP4 checkpoints, on the CPU so the format's sweeps and checks run without a GPU.
#include <fmt/format.h>

#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/cpu_scaled_gemm.hpp"
#include "kernels/cpu/cpu_scaled_operand.hpp"

namespace shapescope::kernels::cpu {

std::string a16w4_formats_text() {
  return "A bf16, B e2m1 packed two per byte with e8m0 per 1x32 (mxfp4), ue4m3 per 1x16 and an fp32 per-tensor "
         "scale (nvfp4) or e8m0 per 1x16 (e2m1_e8m0_16), C bf16";
}

KernelEntry cpu_a16w4_blockscale_entry() {
  KernelEntry entry = cpu_entry(
      {.name = "cpu_a16w4_blockscale", .dtype = "bf16", .formats = a16w4_formats_text(),
       .formats_taken = a16w4_formats(),
       .description = "FP4 weights dequantized per 128 K columns inside the run, Eigen sgemm, fp32 accumulation"});
  entry.unsupported_reason = [](const GemmShape& shape) { return scaled_k_problem(BlockFormatId::nvfp4, shape.k); };
  entry.describe_config = [](const GemmShape& shape) {
    return fmt::format("{} tiles of M{}xN{}, B dequantized in {} pieces of 128 K columns",
                       synthetic::blocks(shape.n, kTileN) * shape.batch_count, shape.m, kTileN,
                       synthetic::blocks(shape.k, 128));
  };
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    return open_scaled_session("cpu_a16w4_blockscale", a16w4_operands(shape.format), shape, seed,
                               device.info().multiprocessors);
  };
  return entry;
}

}  // namespace shapescope::kernels::cpu
