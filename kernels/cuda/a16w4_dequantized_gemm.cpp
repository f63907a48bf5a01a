// a16w4_blockscale's dequantizing path (a16w4_dequantized_gemm.hpp): every run dequantizes the packed FP4
// weights into the session's bf16 scratch and multiplies with cuBLASLt's bf16 GEMM, alpha the product's scale.
#include "kernels/cuda/a16w4_dequantized_gemm.hpp"

#include "kernels/cuda/a16w4_blockscale_config.hpp"
#include "common/device_peaks.hpp"
#include "kernels/cuda/fp8_blockscale.hpp"
#include "kernels/cuda/cublaslt_entries.hpp"
#include "kernels/cuda/cublaslt_matmul.hpp"
#include "kernels/cuda/cublaslt_shape_query.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/device_operands.cuh"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {

// What a session's dequantized problems share: cuBLASLt, the bf16 weights' scratch (rewritten by every run),
// the product's scale on the host (cuBLASLt's alpha).
struct A16w4DequantizedPath::State {
  const A16w4Weights& packed;
  ScaleType scale;
  CublasLtHandle handle;
  DeviceBuffer<uint16_t> weights;
  float output_scale = 1.0f;
};

namespace {

class A16w4DequantizedPrepared final : public CudaPreparedGemm {
 public:
  A16w4DequantizedPrepared(CudaDevice& device, const ReferenceProblem& problem, const A16w4Weights& weights,
                           A16w4DequantizedPath::State& space, ScaleType scale)
      : CudaPreparedGemm(device, problem), weights_(weights), space_(space), scale_(scale) {
    const GemmShape& s = problem.shape;
    const cudaStream_t stream = device.stream();
    a_ = DeviceBuffer<uint16_t>(std::size_t(s.m * s.k));
    c_ = DeviceBuffer<uint16_t>(std::size_t(s.m * s.n));
    fill_bf16_values(a_.data(), problem.seed_a, synthetic::a_bf16, 1, s.m, s.k, stream);
    matmul_ = make_cublaslt_bf16_matmul(space.handle.get(), s);
    matmul_->set_alpha(space.output_scale);
    if (auto refused = matmul_->choose_algorithm(kCublasLtWorkspaceBytes)) throw UnsupportedShape(*refused);
    workspace_ = DeviceBuffer<uint8_t>(matmul_->algorithm().workspace_bytes);
    set_output(c_.data(), s.m * s.n, OutputStrides{s.m * s.n, s.n, 1});
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override {
    const GemmShape& s = problem().shape;
    dequantize_a16w4_weights(weights_, scale_, s.n, s.k, space_.weights.data(), device_.stream());
    matmul_->run(space_.weights.data(), a_.data(), c_.data(), workspace_.data(), device_.stream());
  }
  std::string launch_name() const override {
    return "a16w4_blockscale/dequantize_bf16+cublaslt_" + matmul_->algorithm().describe();
  }

 private:
  const A16w4Weights& weights_;
  A16w4DequantizedPath::State& space_;
  ScaleType scale_;
  DeviceBuffer<uint16_t> a_, c_;
  DeviceBuffer<uint8_t> workspace_;
  std::unique_ptr<CublasLtMatmul> matmul_;
};


}  // namespace

A16w4DequantizedPath::A16w4DequantizedPath(const A16w4Weights& weights, ScaleType scale, int64_t n, int64_t k)
    : state_(new State{weights, scale, {}, DeviceBuffer<uint16_t>(std::size_t(n * k)), 1.0f}) {
  CUDA_CHECK(cudaMemcpy(&state_->output_scale, weights.output_scales.data(), sizeof(float), cudaMemcpyDeviceToHost));
}

A16w4DequantizedPath::~A16w4DequantizedPath() = default;

std::unique_ptr<PreparedGemm> A16w4DequantizedPath::prepare(CudaDevice& device, const ReferenceProblem& problem) {
  return std::make_unique<A16w4DequantizedPrepared>(device, problem, state_->packed, *state_, state_->scale);
}

double a16w4_flops_per_byte() {
  const auto spec = current_device_spec();
  auto peak = find_device_peak(spec ? spec->name : fp8_reference_spec().name);
  if (!peak || peak->bf16_tflops <= 0 || peak->memory_tb_per_s <= 0) peak = find_device_peak(fp8_reference_spec().name);
  return peak->bf16_tflops / peak->memory_tb_per_s;
}

void add_a16w4_dequantized_path(KernelEntry& entry) {
  KernelEntry bf16;  // cuBLASLt's heuristic pick for the bf16 GEMM of the dequantized weights
  describe_by_heuristic(bf16, make_cublaslt_bf16_matmul);
  entry.describe_config = [streaming = entry.describe_config, gemm = bf16.describe_config](const GemmShape& shape) {
    if (a16w4_dequantizes(shape.m, a16w4_flops_per_byte())) return "dequantize to bf16, then cuBLASLt " + gemm(shape);
    return streaming(shape);
  };
  entry.config_for = [streaming = entry.config_for, gemm = bf16.config_for](const GemmShape& shape) {
    return a16w4_dequantizes(shape.m, a16w4_flops_per_byte()) ? gemm(shape) : streaming(shape);
  };
}

}  // namespace shapescope::kernels::cuda
