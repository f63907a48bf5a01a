// The run of our dequantizing paths (a16w4_blockscale past its crossover, mxfp8_dequantized_bf16): operands
// stored in a block-scaled format are dequantized to bf16 inside every run, then multiplied by cuBLASLt's bf16
// GEMM with fp32 accumulation, alpha the scale the dequantization left out. The launch name and the
// configuration columns name cuBLASLt's pick.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kernels/cuda/cublaslt_matmul.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

class DequantizedBf16Gemm : public CudaPreparedGemm {
 public:
  void run() final;
  std::string launch_name() const final;

 protected:
  // Picks cuBLASLt's bf16 algorithm for the problem's shape (UnsupportedShape when it has none) and allocates
  // the output and workspace; `kernel` leads the launch name.
  DequantizedBf16Gemm(CudaDevice& device, const ReferenceProblem& problem, cublasLtHandle_t handle,
                      std::string kernel, float alpha);
  // The bf16 operands the GEMM multiplies, weights [n][k] and activations [m][k]: before the first run.
  void multiply(const uint16_t* weights, const uint16_t* activations);
  // Writes what dequantize_operands() owes to the bf16 operands, on `stream`: every run, before the GEMM.
  virtual void dequantize_operands(cudaStream_t stream) = 0;

 private:
  std::string kernel_;
  const uint16_t* weights_ = nullptr;
  const uint16_t* activations_ = nullptr;
  DeviceBuffer<uint16_t> output_;
  DeviceBuffer<uint8_t> workspace_;
  std::unique_ptr<CublasLtMatmul> matmul_;
};

// Sets `entry`'s describe_config and config_for to cuBLASLt bf16's heuristic pick ("dequantize to bf16, then
// cublasLt algo=... tile=...") at the shapes where `dequantizes` says the entry takes its dequantizing path,
// keeping the entry's own elsewhere; without `dequantizes`, at every shape.
void describe_dequantized_bf16(KernelEntry& entry, std::function<bool(const GemmShape&)> dequantizes = {});

}  // namespace shapescope::kernels::cuda
