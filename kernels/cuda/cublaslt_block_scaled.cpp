// Entries `cublaslt_nvfp4` and `cublaslt_mxfp8`: Blackwell's native block-scaled GEMMs through cuBLASLt, both
// operands in the format: NVFP4 (e2m1, CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3 on both, the per-tensor fp32
// scales as alpha) and MXFP8 (e4m3, VEC32_UE8M0 on both), bf16 output, fp32 compute; scale layouts as
// cublaslt_scale_layout.hpp. Built and listed on every CUDA build; they need compute capability 10.0, so on an
// older GPU a sweep that names them stops before any work (KernelEntry::device_problem). They have not run on
// Blackwell hardware here: no such GPU was lent.
#include <cuda_runtime.h>

#include <optional>

#include "common/user_error.hpp"
#include "kernels/compute_capability.hpp"
#include "kernels/cuda/block_scaled_operands.cuh"
#include "kernels/cuda/cublaslt_entries.hpp"
#include "kernels/cuda/cublaslt_matmul.hpp"
#include "kernels/cuda/cublaslt_scale_layout.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cublaslt_prepared_gemm.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/operand_format.hpp"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

constexpr int kBlackwellMajor = 10;

struct NativeFormat {
  const char* kernel;
  OperandFormat operands;
  cudaDataType_t element;
  cublasLtMatmulMatrixScale_t scale_mode;
};

constexpr NativeFormat kNvfp4{"cublaslt_nvfp4", OperandFormat::nvfp4, CUDA_R_4F_E2M1,
                              CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3};
constexpr NativeFormat kMxfp8{"cublaslt_mxfp8", OperandFormat::mxfp8, CUDA_R_8F_E4M3,
                              CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0};

int64_t code_bytes(const OperandEncoding& encoding, int64_t rows, int64_t k) {
  return rows * k * element_bits(encoding.element) / 8;
}
int64_t scale_bytes_of(const OperandEncoding& encoding, int64_t rows, int64_t k) {
  return cublaslt_vec_scale_bytes(rows, synthetic::blocks(k, encoding.block_k));
}

// See cublaslt_matmul.hpp: weights are cuBLASLt's A (transposed), activations its B.
std::unique_ptr<CublasLtMatmul> make_matmul(cublasLtHandle_t handle, const NativeFormat& format, const GemmShape& s,
                                            const void* weight_scales, const void* activation_scales) {
  const auto n = uint64_t(s.n), k = uint64_t(s.k), m = uint64_t(s.m);
  auto matmul = std::make_unique<CublasLtMatmul>(
      handle, CUBLAS_COMPUTE_32F, CUBLAS_OP_T, CUBLAS_OP_N, CublasLtOperand{format.element, k, n, s.k, 0},
      CublasLtOperand{format.element, k, m, s.k, 0}, CublasLtOperand{CUDA_R_16BF, n, m, s.n, 0}, 1);
  const int32_t mode = format.scale_mode;
  matmul->set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode);
  matmul->set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode);
  matmul->set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, weight_scales);
  matmul->set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, activation_scales);
  return matmul;
}

class NativeGemm final : public CublasLtPreparedGemm {
 public:
  NativeGemm(CudaDevice& device, cublasLtHandle_t handle, const NativeFormat& format, const ReferenceProblem& problem,
             const uint8_t* weights, const uint8_t* weight_scales)
      : CublasLtPreparedGemm(device, problem, weights) {
    const GemmShape& s = problem.shape;
    const cudaStream_t stream = device.stream();
    const OperandEncodings encodings = operand_encodings(format.operands);
    activations_ = DeviceBuffer<uint8_t>(std::size_t(code_bytes(encodings.a, s.m, s.k)));
    activation_scales_ = DeviceBuffer<uint8_t>(std::size_t(scale_bytes_of(encodings.a, s.m, s.k)));
    fill_block_scaled_operand(encodings.a, true, problem.seed_a, s.m, s.k, activations_.data(),
                              activation_scales_.data(), stream);
    std::unique_ptr<CublasLtMatmul> matmul = make_matmul(handle, format, s, weight_scales, activation_scales_.data());
    matmul->set_alpha(synthetic::tensor_scale_value(encodings.a, synthetic::kAStreams, problem.seed_a, 0) *
                      synthetic::tensor_scale_value(encodings.b, synthetic::kBStreams, problem.seed_b, 0));
    use_matmul(std::move(matmul), activations_.data(),
               " for " + std::string(format.kernel) + " at M=" + std::to_string(s.m));
  }

 private:
  DeviceBuffer<uint8_t> activations_;
  DeviceBuffer<uint8_t> activation_scales_;
};

class NativeSession final : public GemmSession {
 public:
  NativeSession(CudaDevice& device, const NativeFormat& format, const WeightShape& shape, uint64_t seed)
      : device_(device), format_(format), shape_(shape), seed_(seed) {
    const OperandEncoding weights = operand_encodings(format.operands).b;
    weights_ = DeviceBuffer<uint8_t>(std::size_t(code_bytes(weights, shape.n, shape.k)));
    weight_scales_ = DeviceBuffer<uint8_t>(std::size_t(scale_bytes_of(weights, shape.n, shape.k)));
    fill_block_scaled_operand(weights, false, seed, shape.n, shape.k, weights_.data(), weight_scales_.data(),
                              device.stream());
    CUDA_CHECK(cudaStreamSynchronize(device.stream()));
  }
  std::size_t activation_bytes(int64_t m) const override {
    const OperandEncoding a = operand_encodings(format_.operands).a;
    return std::size_t(code_bytes(a, m, shape_.k) + scale_bytes_of(a, m, shape_.k) + m * shape_.n * 2) +
           kCublasLtWorkspaceBytes;
  }
  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{format_.operands, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    return std::make_unique<NativeGemm>(device_, handle_.get(), format_, problem, weights_.data(),
                                        weight_scales_.data());
  }

 private:
  CudaDevice& device_;
  NativeFormat format_;
  WeightShape shape_;
  uint64_t seed_;
  CublasLtHandle handle_;
  DeviceBuffer<uint8_t> weights_;
  DeviceBuffer<uint8_t> weight_scales_;
};

// Why the current GPU cannot run these GEMMs, or nothing; without a GPU there is nothing to say yet.
std::optional<std::string> blackwell_problem(const char* kernel) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();  // no GPU: leave no sticky error behind
    return std::nullopt;
  }
  int device = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  cudaDeviceProp properties{};
  CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return compute_capability_problem(kernel, kBlackwellMajor, properties.name, major, minor);
}

std::optional<std::string> native_unsupported_reason(const NativeFormat& format, const GemmShape& shape) {
  if (auto reason = extent_problem(shape)) return reason;
  if (shape.batch_count != 1) return std::string(format.kernel) + " runs batch_count 1 only";
  const OperandEncoding weights = operand_encodings(format.operands).b;
  // 16-byte aligned rows of codes (32 FP4 or 16 FP8 elements) and whole scale blocks.
  const int64_t row_alignment = 128 / element_bits(weights.element);
  if (shape.k % row_alignment != 0)
    return "K=" + std::to_string(shape.k) + " is not a multiple of " + std::to_string(row_alignment) +
           " (16-byte rows of codes)";
  if (shape.n % 8 != 0) return "N=" + std::to_string(shape.n) + " is not a multiple of 8 (bf16 output alignment)";
  return std::nullopt;
}

void register_native(const NativeFormat& format, BlockFormatId named, const char* formats, const char* description) {
  KernelEntry entry({.name = format.kernel,
                     .backend = BackendKind::cuda,
                     .dtype = block_format(named).weight_only ? "fp4" : "fp8",  // the native math class on Blackwell
                     .formats = formats,
                     .formats_taken = {named},
                     .description = description});
  entry.profiled_by_default = false;  // Blackwell only: run when named
  entry.unsupported_reason = [format](const GemmShape& shape) { return native_unsupported_reason(format, shape); };
  entry.device_problem = [format] { return blackwell_problem(format.kernel); };
  entry.describe_config = [](const GemmShape&) {
    return std::string("cuBLASLt heuristic (compute capability 10.0 or newer)");
  };
  entry.open = [format](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    if (auto problem = blackwell_problem(format.kernel)) throw UserError(*problem);
    return std::make_unique<NativeSession>(as_cuda_device(device), format, shape, seed);
  };
  register_kernel(std::move(entry));
}

}  // namespace

void register_cublaslt_block_scaled() {
  register_native(kNvfp4, BlockFormatId::nvfp4,
                  "A and B e2m1 with ue4m3 scales per 16 (VEC16_UE4M3) and fp32 per-tensor scales (alpha), C bf16",
                  "cuBLASLt NVFP4 GEMM, Blackwell's native FP4 block scaling (not run on Blackwell here)");
  register_native(kMxfp8, BlockFormatId::mxfp8, "A and B e4m3 with e8m0 scales per 32 (VEC32_UE8M0), C bf16",
                  "cuBLASLt MXFP8 GEMM, Blackwell's native MX block scaling (not run on Blackwell here)");
}

}  // namespace shapescope::kernels::cuda
