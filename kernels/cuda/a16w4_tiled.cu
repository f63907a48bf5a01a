// a16w4_tiled: C (bf16) = A (bf16) x dequant(B)^T with B FP4 e2m1 in the MXFP4 (e8m0 per 32), NVFP4 (ue4m3
// per 16 and an fp32 per-tensor scale) or e2m1_e8m0_16 layout, as one tiled GEMM on wgmma: the weights are
// dequantized to bf16 in registers as wgmma's A operand (a16w4_tiled_kernel.cuh), so each CTA reads its 4-bit
// weights once for 32, 64 or 128 rows of M. Made for the M between decode (a16w4_blockscale's weight streaming)
// and the large M where a bf16 GEMM of dequantized weights costs little more.
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels/cuda/a16w4_launch.cuh"
#include "kernels/cuda/a16w4_tiled_config.hpp"
#include "kernels/cuda/a16w4_tiled_launch.hpp"
#include "kernels/cuda/a16w4_tiled_weights.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/device_operands.cuh"
#include "kernels/cuda/fp8_blockscale.hpp"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/operand_format.hpp"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

int64_t row_tiles(int64_t m, int block_m) { return (m + block_m - 1) / block_m; }

A16w4TiledConfig choose_dense_config(const GemmShape& shape, int multiprocessors) {
  const A16w4TiledLayout layout = A16w4TiledLayout::of(shape.n, shape.k, 32);
  return choose_a16w4_tiled_config(row_tiles(shape.m, 128), row_tiles(shape.m, 64), row_tiles(shape.m, 32),
                                   layout.n_tiles, layout.k_steps, multiprocessors);
}

class A16w4TiledPrepared final : public CudaPreparedGemm {
 public:
  A16w4TiledPrepared(CudaDevice& device, const ReferenceProblem& problem, const A16w4TiledWeights& weights,
                     ScaleType scale)
      : CudaPreparedGemm(device, problem),
        config_(choose_dense_config(problem.shape, fp8_device_spec(device.ordinal()).multiprocessors)),
        scale_(scale) {
    const GemmShape& s = problem.shape;
    const cudaStream_t stream = device.stream();
    a_ = strided_activations(s.m, s.k, stream, [&](uint16_t* dense) {
      fill_bf16_values(dense, problem.seed_a, synthetic::a_bf16, 1, s.m, s.k, stream);
    });
    c_ = DeviceBuffer<uint16_t>(std::size_t(s.m * s.n));
    row_units_ = row_tiles(s.m, config_.block_m);
    if (config_.split_k > 1) {
      partials_ = DeviceBuffer<float>(std::size_t(s.m * s.n));
      arrivals_ = DeviceBuffer<unsigned>(std::size_t(row_units_ * weights.layout.n_tiles));
      CUDA_CHECK(cudaMemsetAsync(partials_.data(), 0, partials_.bytes(), stream));
      CUDA_CHECK(cudaMemsetAsync(arrivals_.data(), 0, arrivals_.bytes(), stream));
    }
    set_output(c_.data(), s.m * s.n, OutputStrides{s.m * s.n, s.n, 1});
    activations_ = a16w4_tiled_activation_map(a_.data(), s.m, s.k, config_);
    params_.codes = weights.codes.data();
    params_.scales = weights.scales.data();
    params_.tensor_scales = weights.tensor_scales.data();
    params_.c = c_.data();
    params_.partials = partials_.data();
    params_.arrivals = arrivals_.data();
    params_.layout = weights.layout;
    params_.n = int(s.n);
    params_.steps_per_split = config_.steps_per_split;
    params_.m = int(s.m);
    allow_a16w4_tiled_shared_memory(config_, scale_);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override {
    launch_a16w4_tiled(params_, activations_, config_, scale_, row_units_, device_.programmatic_launch(),
                       device_.stream());
  }
  std::string launch_name() const override {
    return "a16w4_tiled/" + describe(config_) + (device_.programmatic_launch() ? "+pdl" : "");
  }

 private:
  A16w4TiledConfig config_;
  ScaleType scale_;
  int64_t row_units_ = 0;
  DeviceBuffer<uint16_t> a_;
  DeviceBuffer<uint16_t> c_;
  DeviceBuffer<float> partials_;
  DeviceBuffer<unsigned> arrivals_;
  A16w4TiledParams params_;
  CUtensorMap activations_{};
};

class A16w4TiledSession final : public GemmSession {
 public:
  A16w4TiledSession(CudaDevice& device, const WeightShape& shape, uint64_t seed)
      : device_(device),
        shape_(shape),
        seed_(seed),
        format_(a16w4_operands(shape.format)),
        weights_(pack_a16w4_tiled_weights(operand_encodings(format_).b, seed, 1, shape.n, shape.k, device.stream())) {}

  std::size_t activation_bytes(int64_t m) const override {
    return std::size_t(m * a16w4_tiled_lda(shape_.k) * 2 + m * shape_.n * (2 + 4) +
                       (m + 31) / 32 * weights_.layout.n_tiles * 4);
  }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{format_, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    return std::make_unique<A16w4TiledPrepared>(device_, problem, weights_, operand_encodings(format_).b.scale);
  }

 private:
  CudaDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  OperandFormat format_;
  A16w4TiledWeights weights_;
};

std::optional<std::string> a16w4_tiled_unsupported_reason(const GemmShape& shape) {
  return a16w4_dense_shape_problem(shape, a16w4_tiled_lda(shape.k));
}

}  // namespace

KernelEntry a16w4_tiled_entry() {
  KernelEntry entry(a16w4_identity(
      "a16w4_tiled",
      "A bf16, B e2m1 with e8m0 per 32 (mxfp4), ue4m3 per 16 + f32 per tensor (nvfp4) or e8m0 per 16 (e2m1_e8m0_16), "
      "dequantized to bf16 in registers, C bf16",
      "ours: tiled W4A16 on wgmma bf16 as C^T = W x A^T (128 weight rows x 32, 64 or 128 tokens, K 64 a step): "
      "the weights dequantized in registers as wgmma's A operand while the previous step multiplies, the tokens "
      "from a shared-memory ring the copy engine fills (TMA, mbarriers), split-K with a fused reduction"));
  entry.unsupported_reason = a16w4_tiled_unsupported_reason;
  entry.describe_config = [](const GemmShape& shape) {
    return describe(choose_dense_config(shape, a16w4_multiprocessors()));
  };
  entry.config_for = [](const GemmShape& shape) {
    const A16w4TiledConfig config = choose_dense_config(shape, a16w4_multiprocessors());
    return KernelConfig{config.block_m, kA16w4TiledBlockN, 1, 1, 1, config.split_k};
  };
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    require_supported_weights("a16w4_tiled", shape,
                              a16w4_tiled_unsupported_reason(GemmShape{1, shape.n, shape.k, shape.batch_count}));
    return std::make_unique<A16w4TiledSession>(as_cuda_device(device), shape, seed);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
