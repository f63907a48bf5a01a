// Entry `cublaslt_bf16`: dense bf16 C[M,N] = A[M,K] * B[N,K]^T through cuBLASLt,
// fp32 accumulation, bf16 output; strided-batched when batch_count > 1. The
// study's torch.matmul baseline, so the algorithm is whatever cuBLASLt's heuristic picks.
#include <optional>

#include "kernels/cuda/cublaslt_entries.hpp"
#include "kernels/cuda/cublaslt_matmul.hpp"
#include "kernels/cuda/cublaslt_shape_query.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
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

class Bf16Gemm final : public CudaPreparedGemm {
 public:
  Bf16Gemm(CudaDevice& device, cublasLtHandle_t handle, const ReferenceProblem& problem, const uint16_t* weights)
      : CudaPreparedGemm(device, problem), weights_(weights) {
    const GemmShape& s = problem.shape;
    activations_ = DeviceBuffer<uint16_t>(std::size_t(s.batch_count * s.m * s.k));
    output_ = DeviceBuffer<uint16_t>(std::size_t(s.batch_count * s.m * s.n));
    fill_bf16_values(activations_.data(), problem.seed_a, synthetic::a_bf16, s.batch_count, s.m, s.k,
                     device.stream());
    matmul_ = make_cublaslt_bf16_matmul(handle, s);
    if (auto refused = matmul_->choose_algorithm(kCublasLtWorkspaceBytes)) throw UnsupportedShape(*refused);
    workspace_ = DeviceBuffer<uint8_t>(matmul_->algorithm().workspace_bytes);
    set_output(output_.data(), int64_t(output_.size()), OutputStrides{s.m * s.n, s.n, 1});
    CUDA_CHECK(cudaStreamSynchronize(device.stream()));
  }
  void run() override {
    matmul_->run(weights_, activations_.data(), output_.data(), workspace_.data(), device_.stream());
  }
  std::string launch_name() const override { return matmul_->algorithm().describe(); }

 private:
  const uint16_t* weights_;
  DeviceBuffer<uint16_t> activations_, output_;
  DeviceBuffer<uint8_t> workspace_;
  std::unique_ptr<CublasLtMatmul> matmul_;
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
  KernelEntry entry;
  entry.name = "cublaslt_bf16";
  entry.backend = BackendKind::cuda;
  entry.dtype = "bf16";
  entry.formats_taken = {BlockFormatId::bf16};
  entry.formats = "A bf16, B bf16, C bf16, fp32 accumulation";
  entry.description = "cuBLASLt dense bf16 GEMM, heuristic algorithm (the study's torch.matmul baseline)";
  entry.batched = true;
  entry.unsupported_reason = [](const GemmShape& shape) -> std::optional<std::string> {
    if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) return "M, N and K must be positive";
    return std::nullopt;
  };
  describe_by_heuristic(entry, make_cublaslt_bf16_matmul);
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    return std::make_unique<Bf16Session>(as_cuda_device(device), shape, seed);
  };
  register_kernel(std::move(entry));
}

}  // namespace shapescope::kernels::cuda
