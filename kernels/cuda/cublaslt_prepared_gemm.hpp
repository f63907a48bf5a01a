// The prepared GEMM of the cuBLASLt entries: the bf16 output [batch][m][n] and one matmul (the session's weights
// cuBLASLt's A, the activations its B) with the algorithm cuBLASLt's heuristic picks and its workspace. A derived
// class fills its activations on the device's stream, then hands the matmul to use_matmul().
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cuda/cublaslt_matmul.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/device_buffer.hpp"

namespace shapescope::kernels::cuda {

class CublasLtPreparedGemm : public CudaPreparedGemm {
 public:
  void run() final;
  std::string launch_name() const final { return matmul_->algorithm().describe(); }

 protected:
  CublasLtPreparedGemm(CudaDevice& device, const ReferenceProblem& problem, const void* weights);
  // Picks `matmul`'s algorithm (UnsupportedShape when cuBLASLt has none: its answer, then `refusal_context`),
  // allocates its workspace and waits for the operands.
  void use_matmul(std::unique_ptr<CublasLtMatmul> matmul, const void* activations, const std::string& refusal_context);
  uint16_t* output() const { return output_.data(); }

 private:
  const void* weights_;
  const void* activations_ = nullptr;
  DeviceBuffer<uint16_t> output_;
  DeviceBuffer<uint8_t> workspace_;
  std::unique_ptr<CublasLtMatmul> matmul_;
};

}  // namespace shapescope::kernels::cuda
