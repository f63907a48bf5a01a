// a16w4_blockscale's dequantizing path (a16w4_dequantized_gemm.hpp): every run dequantizes the packed FP4
// weights into the session's bf16 scratch and multiplies with cuBLASLt's bf16 GEMM (dequantized_bf16_gemm.hpp),
// alpha the product's scale.
#include "kernels/cuda/a16w4_dequantized_gemm.hpp"

#include "kernels/cuda/a16w4_blockscale_config.hpp"
#include "common/device_peaks.hpp"
#include "kernels/cuda/fp8_blockscale.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/dequantized_bf16_gemm.hpp"
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

class A16w4DequantizedPrepared final : public DequantizedBf16Gemm {
 public:
  A16w4DequantizedPrepared(CudaDevice& device, const ReferenceProblem& problem, A16w4DequantizedPath::State& space)
      : DequantizedBf16Gemm(device, problem, space.handle.get(), "a16w4_blockscale", space.output_scale),
        space_(space),
        a_(std::size_t(problem.shape.m * problem.shape.k)) {
    const GemmShape& s = problem.shape;
    fill_bf16_values(a_.data(), problem.seed_a, synthetic::a_bf16, 1, s.m, s.k, device.stream());
    multiply(space.weights.data(), a_.data());
    CUDA_CHECK(cudaStreamSynchronize(device.stream()));
  }

 private:
  void dequantize_operands(cudaStream_t stream) override {
    const GemmShape& s = problem().shape;
    dequantize_a16w4_weights(space_.packed, space_.scale, s.n, s.k, space_.weights.data(), stream);
  }

  A16w4DequantizedPath::State& space_;
  DeviceBuffer<uint16_t> a_;
};

}  // namespace

A16w4DequantizedPath::A16w4DequantizedPath(const A16w4Weights& weights, ScaleType scale, int64_t n, int64_t k)
    : state_(new State{weights, scale, {}, DeviceBuffer<uint16_t>(std::size_t(n * k)), 1.0f}) {
  CUDA_CHECK(cudaMemcpy(&state_->output_scale, weights.output_scales.data(), sizeof(float), cudaMemcpyDeviceToHost));
}

A16w4DequantizedPath::~A16w4DequantizedPath() = default;

std::unique_ptr<PreparedGemm> A16w4DequantizedPath::prepare(CudaDevice& device, const ReferenceProblem& problem) {
  return std::make_unique<A16w4DequantizedPrepared>(device, problem, *state_);
}

double a16w4_flops_per_byte() {
  const auto spec = current_device_spec();
  auto peak = find_device_peak(spec ? spec->name : fp8_reference_spec().name);
  if (!peak || peak->bf16_tflops <= 0 || peak->memory_tb_per_s <= 0) peak = find_device_peak(fp8_reference_spec().name);
  return peak->bf16_tflops / peak->memory_tb_per_s;
}

void add_a16w4_dequantized_path(KernelEntry& entry) {
  describe_dequantized_bf16(entry,
                            [](const GemmShape& shape) { return a16w4_dequantizes(shape.m, a16w4_flops_per_byte()); });
}

}  // namespace shapescope::kernels::cuda
