// Entry `cublaslt_bf16`: dense bf16 C[M,N] = A[M,K] * B[N,K]^T through cuBLASLt,
// fp32 accumulation, bf16 output; strided-batched when batch_count > 1. The
// study's torch.matmul baseline, so the algorithm is whatever cuBLASLt's heuristic picks.
#include <optional>

#include "kernels/cuda/cublaslt_entries.hpp"
#include "kernels/cuda/cublaslt_matmul.hpp"
#include "kernels/cuda/cublaslt_shape_query.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cublaslt_prepared_gemm.hpp"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

struct Bf16Layouts {
  CublasLtOperand weights, activations, output;
};

// See cublaslt_matmul.hpp for why weights are cuBLASLt's A and activations its B.
Bf16Layouts bf16_layouts(const GemmShape& s) {
  const auto n = uint64_t(s.n), k = uint64_t(s.k), m = uint64_t(s.m);
  return {{CUDA_R_16BF, k, n, s.k, s.n * s.k}, {CUDA_R_16BF, k, m, s.k, s.m * s.k},
          {CUDA_R_16BF, n, m, s.n, s.m * s.n}};
}

class Bf16Gemm final : public CublasLtPreparedGemm {
 public:
  Bf16Gemm(CudaDevice& device, cublasLtHandle_t handle, const ReferenceProblem& problem, const uint16_t* weights)
      : CublasLtPreparedGemm(device, problem, weights) {
    const GemmShape& s = problem.shape;
    activations_ = DeviceBuffer<uint16_t>(std::size_t(s.batch_count * s.m * s.k));
    fill_bf16_values(activations_.data(), problem.seed_a, synthetic::a_bf16, s.batch_count, s.m, s.k,
                     device.stream());
    use_matmul(make_cublaslt_bf16_matmul(handle, s), activations_.data(), "");
  }

 private:
  DeviceBuffer<uint16_t> activations_;
};

class Bf16Session final : public GemmSession {
 public:
  Bf16Session(CudaDevice& device, const WeightShape& shape, uint64_t seed)
      : device_(device), shape_(shape), seed_(seed),
        weights_(std::size_t(shape.batch_count * shape.n * shape.k)) {
    fill_bf16_values(weights_.data(), seed_, synthetic::b_bf16, shape.batch_count, shape.n, shape.k, device.stream());
  }
  std::size_t activation_bytes(int64_t m) const override {
    return std::size_t(shape_.batch_count * m * (shape_.k + shape_.n) * 2) + kCublasLtWorkspaceBytes;
  }
  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{OperandFormat::bf16, GemmShape{m, shape_.n, shape_.k, shape_.batch_count}, seed,
                                   seed_};
    return std::make_unique<Bf16Gemm>(device_, handle_.get(), problem, weights_.data());
  }

 private:
  CudaDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  CublasLtHandle handle_;
  DeviceBuffer<uint16_t> weights_;
};

}  // namespace

std::unique_ptr<CublasLtMatmul> make_cublaslt_bf16_matmul(cublasLtHandle_t handle, const GemmShape& shape) {
  const Bf16Layouts layouts = bf16_layouts(shape);
  return std::make_unique<CublasLtMatmul>(handle, CUBLAS_COMPUTE_32F, CUBLAS_OP_T, CUBLAS_OP_N, layouts.weights,
                                          layouts.activations, layouts.output, shape.batch_count);
}

void register_cublaslt_bf16() {
  KernelEntry entry({.name = "cublaslt_bf16", .backend = BackendKind::cuda, .dtype = "bf16",
                     .formats = "A bf16, B bf16, C bf16, fp32 accumulation", .formats_taken = {BlockFormatId::bf16},
                     .description = "cuBLASLt dense bf16 GEMM, heuristic algorithm (the study's torch.matmul baseline)"});
  entry.batched = true;
  entry.unsupported_reason = extent_problem;
  describe_by_heuristic(entry, make_cublaslt_bf16_matmul);
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    return std::make_unique<Bf16Session>(as_cuda_device(device), shape, seed);
  };
  register_kernel(std::move(entry));
}

}  // namespace shapescope::kernels::cuda
