// hipblaslt_bf16: dense bf16 C[M,N] = A[M,K] * B[N,K]^T through hipBLASLt, f32 accumulation, bf16
// output, the algorithm hipBLASLt's heuristic picks: the vendor baseline on AMD (cublaslt_bf16's
// counterpart). Compiled only when CMake finds hipBLASLt (cmake/hip_backend.cmake), as host C++ by
// the project's compiler: it has no device code, and Debian's hipcc (clang 15) crashes on the <regex>
// that hipblaslt.h includes in C++20 HIP mode.
// No FP8 block-scaled baseline: hipBLASLt declares 1x128 and 128x128 f32 block scales
// (HIPBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F, _BLK128x128_32F) but documents both "not supported
// yet" and rejects them when set; its FP8 GEMMs take per-tensor (SCALAR_32F) or per-row/column
// (OUTER_VEC_32F) scales, which are not DeepSeek's scaling.
#include <hipblaslt/hipblaslt.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/hip/hip_buffer.hpp"
#include "kernels/hip/hip_check.hpp"
#include "kernels/hip/hip_kernel_entries.hpp"
#include "kernels/hip/hip_operands.hpp"
#include "kernels/hip/hip_prepared_gemm.hpp"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::rocm {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;  // hipBLASLt's split-K algorithms need one

void check_hipblaslt(hipblasStatus_t status, const char* call) {
  if (status != HIPBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed: hipBLAS status " + std::to_string(int(status)));
}
#define HIPBLASLT_CHECK(call) check_hipblaslt((call), #call)

// One matmul's descriptors and the heuristic's algorithm. hipBLASLt is column-major: our row-major
// C[M][N] = A B^T is its D[N][M] = op_T(B[K][N]) x A[K][M], so weights are its A, activations its B.
class HipblasLtBf16Matmul {
 public:
  HipblasLtBf16Matmul(hipblasLtHandle_t handle, const GemmShape& s) : handle_(handle) {
    HIPBLASLT_CHECK(hipblasLtMatmulDescCreate(&matmul_, HIPBLAS_COMPUTE_32F, HIP_R_32F));
    const hipblasOperation_t transpose = HIPBLAS_OP_T, keep = HIPBLAS_OP_N;
    HIPBLASLT_CHECK(hipblasLtMatmulDescSetAttribute(matmul_, HIPBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose));
    HIPBLASLT_CHECK(hipblasLtMatmulDescSetAttribute(matmul_, HIPBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep));
    HIPBLASLT_CHECK(hipblasLtMatrixLayoutCreate(&weights_, HIP_R_16BF, uint64_t(s.k), uint64_t(s.n), s.k));
    HIPBLASLT_CHECK(hipblasLtMatrixLayoutCreate(&activations_, HIP_R_16BF, uint64_t(s.k), uint64_t(s.m), s.k));
    HIPBLASLT_CHECK(hipblasLtMatrixLayoutCreate(&output_, HIP_R_16BF, uint64_t(s.n), uint64_t(s.m), s.n));
    HIPBLASLT_CHECK(hipblasLtMatmulPreferenceCreate(&preference_));
    const uint64_t workspace = kWorkspaceBytes;
    HIPBLASLT_CHECK(hipblasLtMatmulPreferenceSetAttribute(preference_, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                          &workspace, sizeof workspace));
    int found = 0;
    const hipblasStatus_t status = hipblasLtMatmulAlgoGetHeuristic(handle_, matmul_, weights_, activations_, output_,
                                                                   output_, preference_, 1, &heuristic_, &found);
    if (status != HIPBLAS_STATUS_SUCCESS || found == 0)
      refused_ = "hipBLASLt has no algorithm for this shape (status " + std::to_string(int(status)) + ")";
  }
  ~HipblasLtBf16Matmul() {
    (void)hipblasLtMatmulPreferenceDestroy(preference_);
    (void)hipblasLtMatrixLayoutDestroy(output_);
    (void)hipblasLtMatrixLayoutDestroy(activations_);
    (void)hipblasLtMatrixLayoutDestroy(weights_);
    (void)hipblasLtMatmulDescDestroy(matmul_);
  }
  HipblasLtBf16Matmul(const HipblasLtBf16Matmul&) = delete;
  HipblasLtBf16Matmul& operator=(const HipblasLtBf16Matmul&) = delete;

  const std::optional<std::string>& refused() const { return refused_; }
  std::size_t workspace_bytes() const { return heuristic_.workspaceSize; }

  void run(const uint16_t* weights, const uint16_t* activations, uint16_t* output, void* workspace,
           hipStream_t stream) const {
    const float alpha = 1.0f, beta = 0.0f;
    HIPBLASLT_CHECK(hipblasLtMatmul(handle_, matmul_, &alpha, weights, weights_, activations, activations_, &beta,
                                    output, output_, output, output_, &heuristic_.algo, workspace,
                                    heuristic_.workspaceSize, stream));
  }

 private:
  hipblasLtHandle_t handle_;
  hipblasLtMatmulDesc_t matmul_ = nullptr;
  hipblasLtMatrixLayout_t weights_ = nullptr, activations_ = nullptr, output_ = nullptr;
  hipblasLtMatmulPreference_t preference_ = nullptr;
  hipblasLtMatmulHeuristicResult_t heuristic_{};
  std::optional<std::string> refused_;
};

class HipblasLtHandle {
 public:
  HipblasLtHandle() { HIPBLASLT_CHECK(hipblasLtCreate(&handle_)); }
  ~HipblasLtHandle() { (void)hipblasLtDestroy(handle_); }
  HipblasLtHandle(const HipblasLtHandle&) = delete;
  HipblasLtHandle& operator=(const HipblasLtHandle&) = delete;
  hipblasLtHandle_t get() const { return handle_; }

 private:
  hipblasLtHandle_t handle_ = nullptr;
};

class HipblasLtBf16Prepared final : public HipPreparedGemm {
 public:
  HipblasLtBf16Prepared(HipDevice& device, hipblasLtHandle_t handle, const ReferenceProblem& problem,
                        const uint16_t* weights)
      : HipPreparedGemm(device, problem), weights_(weights), matmul_(handle, problem.shape) {
    if (matmul_.refused()) throw UnsupportedShape(*matmul_.refused());
    const GemmShape& s = problem.shape;
    activations_ = HipBuffer<uint16_t>(std::size_t(s.m * s.k));
    output_ = HipBuffer<uint16_t>(std::size_t(s.m * s.n));
    workspace_ = HipBuffer<uint8_t>(matmul_.workspace_bytes());
    fill_bf16_values(activations_.data(), problem.seed_a, synthetic::a_bf16, s.m, s.k, device.stream());
    set_output(output_.data());
    HIP_CHECK(hipStreamSynchronize(device.stream()));
  }

  void run() override {
    matmul_.run(weights_, activations_.data(), output_.data(), workspace_.data(), device_.stream());
  }
  std::string launch_name() const override { return "hipblaslt_bf16/heuristic"; }

 private:
  const uint16_t* weights_;
  HipblasLtBf16Matmul matmul_;
  HipBuffer<uint16_t> activations_, output_;
  HipBuffer<uint8_t> workspace_;
};

class HipblasLtBf16Session final : public GemmSession {
 public:
  HipblasLtBf16Session(HipDevice& device, const WeightShape& shape, uint64_t seed)
      : device_(device), shape_(shape), seed_(seed), weights_(std::size_t(shape.n * shape.k)) {
    fill_bf16_values(weights_.data(), seed, synthetic::b_bf16, shape.n, shape.k, device.stream());
    HIP_CHECK(hipStreamSynchronize(device.stream()));
  }
  std::size_t activation_bytes(int64_t m) const override {
    return std::size_t(m * (shape_.k + shape_.n) * 2) + kWorkspaceBytes;
  }
  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{OperandFormat::bf16, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    return std::make_unique<HipblasLtBf16Prepared>(device_, handle_.get(), problem, weights_.data());
  }

 private:
  HipDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  HipblasLtHandle handle_;
  HipBuffer<uint16_t> weights_;
};

std::optional<std::string> unsupported_reason(const GemmShape& shape) {
  if (shape.batch_count != 1) return "batch_count=" + std::to_string(shape.batch_count) + " (not batched here)";
  return extent_problem(shape);
}

}  // namespace

KernelEntry hipblaslt_bf16_entry() {
  KernelEntry entry({.name = "hipblaslt_bf16", .backend = BackendKind::hip, .dtype = "bf16",
                     .formats = "A bf16, B bf16, C bf16, fp32 accumulation", .formats_taken = {BlockFormatId::bf16},
                     .description = "hipBLASLt dense bf16 GEMM, heuristic algorithm (the vendor baseline on AMD)"});
  entry.unsupported_reason = unsupported_reason;
  entry.describe_config = [](const GemmShape&) { return std::string("hipBLASLt heuristic"); };
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    require_supported_weights("hipblaslt_bf16", shape,
                              unsupported_reason(GemmShape{1, shape.n, shape.k, shape.batch_count}));
    return std::make_unique<HipblasLtBf16Session>(as_hip_device(device), shape, seed);
  };
  return entry;
}

}  // namespace shapescope::kernels::rocm
