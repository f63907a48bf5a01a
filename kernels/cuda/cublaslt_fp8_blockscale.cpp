// Entry `cublaslt_fp8_blockscale`: C[M,N] (bf16) = A[M,K] (e4m3, 1x128 f32 scales)
// * B[N,K]^T (e4m3, 128x128 f32 scales) through cuBLASLt's Hopper block scaling
// (VEC128_32F for the activations, BLK128x128_32F for the weights), fp32 compute.
// Scale layouts follow cublaslt_scale_layout.hpp exactly (K-block rows padded to 4).
#include <optional>

#include "kernels/cuda/cublaslt_entries.hpp"
#include "kernels/cuda/cublaslt_matmul.hpp"
#include "kernels/cuda/cublaslt_scale_layout.hpp"
#include "kernels/cuda/cublaslt_shape_query.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cublaslt_prepared_gemm.hpp"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

ScaleStrides strides_of(const ScaleTensorLayout& layout) { return {0, layout.outer_stride, layout.kgroup_stride}; }

class Fp8BlockscaleGemm final : public CublasLtPreparedGemm {
 public:
  Fp8BlockscaleGemm(CudaDevice& device, cublasLtHandle_t handle, const ReferenceProblem& problem,
                    const uint8_t* weights, const float* weight_scales)
      : CublasLtPreparedGemm(device, problem, weights) {
    const GemmShape& s = problem.shape;
    const cudaStream_t stream = device.stream();
    const ScaleTensorLayout scale_layout = cublaslt_vec128_scale_layout(s.m, s.k);
    activations_ = DeviceBuffer<uint8_t>(std::size_t(s.m * s.k));
    activation_scales_ = DeviceBuffer<float>(std::size_t(scale_layout.floats));
    fill_fp8_codes(activations_.data(), problem.seed_a, synthetic::a_codes, 1, s.m, s.k, stream);
    fill_a_scales(activation_scales_.data(), problem.seed_a, 1, s.m, s.k, strides_of(scale_layout), stream);
    use_matmul(make_cublaslt_fp8_matmul(handle, s, weight_scales, activation_scales_.data()), activations_.data(),
               " for FP8 block scaling at M=" + std::to_string(s.m));
  }

 private:
  DeviceBuffer<uint8_t> activations_;
  DeviceBuffer<float> activation_scales_;
};

class Fp8BlockscaleSession final : public GemmSession {
 public:
  Fp8BlockscaleSession(CudaDevice& device, const WeightShape& shape, uint64_t seed, bool pad_weight_scales)
      : device_(device), shape_(shape), seed_(seed), weights_(std::size_t(shape.n * shape.k)) {
    const ScaleTensorLayout layout = cublaslt_blk128x128_scale_layout(shape.n, shape.k, pad_weight_scales);
    weight_scales_ = DeviceBuffer<float>(std::size_t(layout.floats));
    const cudaStream_t stream = device.stream();
    // Padding floats are never read for real blocks; zero keeps them finite.
    CUDA_CHECK(cudaMemsetAsync(weight_scales_.data(), 0, weight_scales_.bytes(), stream));
    fill_fp8_codes(weights_.data(), seed_, synthetic::b_codes, 1, shape.n, shape.k, stream);
    fill_b_scales(weight_scales_.data(), seed_, 1, shape.n, shape.k, strides_of(layout), stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::size_t activation_bytes(int64_t m) const override {
    return std::size_t(m * shape_.k + m * synthetic::blocks(shape_.k) * 4 + m * shape_.n * 2) +
           kCublasLtWorkspaceBytes;
  }
  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{OperandFormat::fp8_blockscale, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    return std::make_unique<Fp8BlockscaleGemm>(device_, handle_.get(), problem, weights_.data(),
                                               weight_scales_.data());
  }

 private:
  CudaDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  CublasLtHandle handle_;
  DeviceBuffer<uint8_t> weights_;
  DeviceBuffer<float> weight_scales_;
};

}  // namespace

// See cublaslt_matmul.hpp: weights are cuBLASLt's A (transposed), activations its B.
std::unique_ptr<CublasLtMatmul> make_cublaslt_fp8_matmul(cublasLtHandle_t handle, const GemmShape& s,
                                                const float* weight_scales, const float* activation_scales) {
  const auto n = uint64_t(s.n), k = uint64_t(s.k), m = uint64_t(s.m);
  auto matmul = std::make_unique<CublasLtMatmul>(
      handle, CUBLAS_COMPUTE_32F, CUBLAS_OP_T, CUBLAS_OP_N, CublasLtOperand{CUDA_R_8F_E4M3, k, n, s.k, 0},
      CublasLtOperand{CUDA_R_8F_E4M3, k, m, s.k, 0}, CublasLtOperand{CUDA_R_16BF, n, m, s.n, 0}, 1);
  const int32_t weight_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  const int32_t activation_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  matmul->set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, weight_mode);
  matmul->set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, activation_mode);
  matmul->set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, weight_scales);
  matmul->set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, activation_scales);
  return matmul;
}

std::optional<std::string> cublaslt_fp8_unsupported_reason(const GemmShape& shape) {
  if (auto reason = extent_problem(shape)) return reason;
  if (shape.batch_count != 1) return "cuBLASLt block-scaled FP8 runs batch_count 1 only";
  // FP8 operands need 16-byte aligned rows, the bf16 output too.
  if (shape.k % 16 != 0) return "K=" + std::to_string(shape.k) + " is not a multiple of 16 (FP8 row alignment)";
  if (shape.n % 8 != 0) return "N=" + std::to_string(shape.n) + " is not a multiple of 8 (bf16 output alignment)";
  // Measured on an H100 with cuBLASLt 13.0 (tests/gpu/cuda_backend_test.cpp proves it on each device):
  // the heuristic refuses block-scaled FP8 exactly when M % 4 != 0, the 1x128 scales' leading
  // dimension (M floats) not being a multiple of 16 bytes.
  if (shape.m % 4 != 0)
    return "M=" + std::to_string(shape.m) + " is not a multiple of 4: cuBLASLt answers NOT_SUPPORTED (1x128 scales' "
           "leading dimension M must be 16-byte aligned)";
  return std::nullopt;
}

std::unique_ptr<GemmSession> open_cublaslt_fp8_blockscale(Device& device, const WeightShape& shape, uint64_t seed,
                                                          bool pad_weight_scales) {
  return std::make_unique<Fp8BlockscaleSession>(as_cuda_device(device), shape, seed, pad_weight_scales);
}

void register_cublaslt_fp8_blockscale() {
  KernelEntry entry(
      {.name = "cublaslt_fp8_blockscale", .backend = BackendKind::cuda, .dtype = "fp8",
       .formats = "A e4m3 1x128 f32 scales (VEC128_32F), B e4m3 128x128 f32 scales (BLK128x128_32F), C bf16",
       .formats_taken = {BlockFormatId::fp8_blockscale},
       .description = "cuBLASLt FP8 GEMM with DeepSeek-style block scaling, heuristic algorithm"});
  entry.unsupported_reason = cublaslt_fp8_unsupported_reason;
  describe_by_heuristic(entry, [](cublasLtHandle_t handle, const GemmShape& shape) {
    // The heuristic wants scale pointers set but never reads them.
    static const float placeholder_scale[4] = {};
    return make_cublaslt_fp8_matmul(handle, shape, placeholder_scale, placeholder_scale);
  });
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) {
    return open_cublaslt_fp8_blockscale(device, shape, seed);
  };
  register_kernel(std::move(entry));
}

}  // namespace shapescope::kernels::cuda
