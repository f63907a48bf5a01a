#include "kernels/cuda/dequantized_bf16_gemm.hpp"

#include <utility>

#include "kernels/cuda/cublaslt_entries.hpp"
#include "kernels/cuda/cublaslt_shape_query.hpp"

namespace shapescope::kernels::cuda {

DequantizedBf16Gemm::DequantizedBf16Gemm(CudaDevice& device, const ReferenceProblem& problem,
                                         cublasLtHandle_t handle, std::string kernel, float alpha)
    : CudaPreparedGemm(device, problem), kernel_(std::move(kernel)) {
  const GemmShape& s = problem.shape;
  matmul_ = make_cublaslt_bf16_matmul(handle, s);
  matmul_->set_alpha(alpha);
  if (auto refused = matmul_->choose_algorithm(kCublasLtWorkspaceBytes)) throw UnsupportedShape(*refused);
  workspace_ = DeviceBuffer<uint8_t>(matmul_->algorithm().workspace_bytes);
  output_ = DeviceBuffer<uint16_t>(std::size_t(s.m * s.n));
  set_output(output_.data(), s.m * s.n, OutputStrides{s.m * s.n, s.n, 1});
}

void DequantizedBf16Gemm::multiply(const uint16_t* weights, const uint16_t* activations) {
  weights_ = weights;
  activations_ = activations;
}

void DequantizedBf16Gemm::run() {
  dequantize_operands(device_.stream());
  matmul_->run(weights_, activations_, output_.data(), workspace_.data(), device_.stream());
}

std::string DequantizedBf16Gemm::launch_name() const {
  return kernel_ + "/dequantize_bf16+cublaslt_" + matmul_->algorithm().describe();
}

void describe_dequantized_bf16(KernelEntry& entry, std::function<bool(const GemmShape&)> dequantizes) {
  KernelEntry bf16;  // cuBLASLt's heuristic pick for the bf16 GEMM of the dequantized operands
  describe_by_heuristic(bf16, make_cublaslt_bf16_matmul);
  const auto takes = [dequantizes](const GemmShape& shape) { return !dequantizes || dequantizes(shape); };
  entry.describe_config = [own = entry.describe_config, gemm = bf16.describe_config, takes](const GemmShape& shape) {
    return takes(shape) ? "dequantize to bf16, then " + gemm(shape) : own(shape);
  };
  entry.config_for = [own = entry.config_for, gemm = bf16.config_for, takes](const GemmShape& shape) {
    return takes(shape) ? gemm(shape) : own(shape);
  };
}

}  // namespace shapescope::kernels::cuda
