#include "kernels/cuda/cublaslt_prepared_gemm.hpp"

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {

CublasLtPreparedGemm::CublasLtPreparedGemm(CudaDevice& device, const ReferenceProblem& problem, const void* weights)
    : CudaPreparedGemm(device, problem),
      weights_(weights),
      output_(std::size_t(problem.shape.batch_count * problem.shape.m * problem.shape.n)) {}

void CublasLtPreparedGemm::use_matmul(std::unique_ptr<CublasLtMatmul> matmul, const void* activations,
                                      const std::string& refusal_context) {
  matmul_ = std::move(matmul);
  activations_ = activations;
  if (auto refused = matmul_->choose_algorithm(kCublasLtWorkspaceBytes))
    throw UnsupportedShape(*refused + refusal_context);
  workspace_ = DeviceBuffer<uint8_t>(matmul_->algorithm().workspace_bytes);
  const GemmShape& s = problem().shape;
  set_output(output_.data(), int64_t(output_.size()), OutputStrides{s.m * s.n, s.n, 1});
  CUDA_CHECK(cudaStreamSynchronize(device_.stream()));
}

void CublasLtPreparedGemm::run() {
  matmul_->run(weights_, activations_, output_.data(), workspace_.data(), device_.stream());
}

}  // namespace shapescope::kernels::cuda
