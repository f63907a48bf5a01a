// The dequantizing path of a16w4_blockscale past its crossover M (a16w4_blockscale_config.hpp): the packed FP4
// weights dequantized to bf16 inside every run (a16w4_dequantize.cu), then cuBLASLt's bf16 GEMM. Declared here
// without cuBLASLt's headers so the kernel files do not see them.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/cuda/a16w4_weights.cuh"
#include "kernels/cuda/cuda_device.hpp"
#include "kernels/kernel.hpp"
#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels::cuda {

// Writes B' [n][k] bf16 row-major = the weights' values x 2^-offset (exact in bf16: the output scale, 2^offset
// times any per-tensor scale, is applied to the product), on `stream`.
void dequantize_a16w4_weights(const A16w4Weights& weights, ScaleType scale, int64_t n, int64_t k, uint16_t* out,
                              cudaStream_t stream);

// One session's dequantizing path: the bf16 scratch every run rewrites and cuBLASLt.
class A16w4DequantizedPath {
 public:
  A16w4DequantizedPath(const A16w4Weights& weights, ScaleType scale, int64_t n, int64_t k);
  ~A16w4DequantizedPath();
  A16w4DequantizedPath(const A16w4DequantizedPath&) = delete;
  A16w4DequantizedPath& operator=(const A16w4DequantizedPath&) = delete;

  std::unique_ptr<PreparedGemm> prepare(CudaDevice& device, const ReferenceProblem& problem);

  struct State;

 private:
  std::unique_ptr<State> state_;
};

// The current GPU's bf16 peak over its memory bandwidth (datasheet, common/device_peaks), FLOP per byte: the
// reference H100's for a GPU the table lacks, or without one. The crossover's machine balance.
double a16w4_flops_per_byte();

// Wraps the entry's describe_config and config_for: past the crossover they describe the dequantizing path
// (cuBLASLt's heuristic pick for the bf16 GEMM).
void add_a16w4_dequantized_path(KernelEntry& entry);

}  // namespace shapescope::kernels::cuda
