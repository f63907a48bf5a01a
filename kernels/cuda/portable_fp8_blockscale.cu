// portable_fp8_blockscale and portable_fp8_blockscale_bpreshuffle on the CUDA backend: the
// one-source kernel of kernels/portable/ (also the portable path of the HIP backend's kernels),
// with B row-major or pre-shuffled for the FP8 MFMA (kernels/mfma_preshuffled_b.hpp), registered
// here so its correctness and the shuffle's are checked on NVIDIA GPUs like our other kernels.
#include <memory>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_operands.cuh"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/portable/portable_fp8_blockscale.hpp"
#include "kernels/portable/portable_fp8_blockscale_shape.hpp"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

using portable::BLayout;
using portable::PortableFp8Params;

class PortableFp8Prepared final : public CudaPreparedGemm {
 public:
  PortableFp8Prepared(CudaDevice& device, const ReferenceProblem& problem, const uint8_t* b, const float* b_scales,
                      BLayout layout)
      : CudaPreparedGemm(device, problem), layout_(layout) {
    const GemmShape& s = problem.shape;
    const int64_t kblocks = synthetic::blocks(s.k);
    a_ = DeviceBuffer<uint8_t>(std::size_t(s.m * s.k));
    a_scales_ = DeviceBuffer<float>(std::size_t(s.m * kblocks));
    c_ = DeviceBuffer<uint16_t>(std::size_t(s.m * s.n));
    const cudaStream_t stream = device.stream();
    fill_fp8_codes(a_.data(), problem.seed_a, synthetic::a_codes, 1, s.m, s.k, stream);
    fill_a_scales(a_scales_.data(), problem.seed_a, 1, s.m, s.k, ScaleStrides{s.m * kblocks, kblocks, 1}, stream);
    set_output(c_.data(), s.m * s.n, OutputStrides{s.m * s.n, s.n, 1});
    params_ = PortableFp8Params{a_.data(), a_scales_.data(), b, b_scales, c_.data(), int(s.m), int(s.n), int(s.k)};
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override { portable::launch_portable_fp8_blockscale(params_, layout_, device_.stream()); }
  std::string launch_name() const override {
    return layout_ == BLayout::mfma_preshuffled ? "portable_fp8_blockscale_bpreshuffle/64x64_f32fma"
                                                : "portable_fp8_blockscale/64x64_f32fma";
  }

 private:
  BLayout layout_;
  DeviceBuffer<uint8_t> a_;
  DeviceBuffer<float> a_scales_;
  DeviceBuffer<uint16_t> c_;
  PortableFp8Params params_;
};

class PortableFp8Session final : public GemmSession {
 public:
  PortableFp8Session(CudaDevice& device, const WeightShape& shape, uint64_t seed, BLayout layout)
      : device_(device), shape_(shape), seed_(seed), layout_(layout) {
    const int64_t kblocks = synthetic::blocks(shape.k), nblocks = synthetic::blocks(shape.n);
    const cudaStream_t stream = device.stream();
    b_ = DeviceBuffer<uint8_t>(std::size_t(shape.n * shape.k));
    b_scales_ = DeviceBuffer<float>(std::size_t(nblocks * kblocks));
    fill_fp8_codes(b_.data(), seed, synthetic::b_codes, 1, shape.n, shape.k, stream);
    if (layout == BLayout::mfma_preshuffled) {
      DeviceBuffer<uint8_t> shuffled(std::size_t(mfma_b::shuffled_bytes(shape.n, shape.k)));
      portable::launch_preshuffle_b(b_.data(), shuffled.data(), shape.n, shape.k, stream);
      CUDA_CHECK(cudaStreamSynchronize(stream));  // the row-major codes are freed next
      b_ = std::move(shuffled);
    }
    fill_b_scales(b_scales_.data(), seed, 1, shape.n, shape.k, ScaleStrides{nblocks * kblocks, kblocks, 1}, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  std::size_t activation_bytes(int64_t m) const override {
    return std::size_t(m * (shape_.k + synthetic::blocks(shape_.k) * 4) + m * shape_.n * 2);
  }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{OperandFormat::fp8_blockscale, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    return std::make_unique<PortableFp8Prepared>(device_, problem, b_.data(), b_scales_.data(), layout_);
  }

 private:
  CudaDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  BLayout layout_;
  DeviceBuffer<uint8_t> b_;
  DeviceBuffer<float> b_scales_;
};

KernelEntry portable_entry(const std::string& name, BLayout layout) {
  KernelEntry entry(
      {.name = name,
       .backend = BackendKind::cuda,
       .dtype = "fp8",
       .formats = "A e4m3 1x128 f32 scales, B e4m3 128x128 f32 scales (row-major), C bf16",
       .formats_taken = {BlockFormatId::fp8_blockscale},
       .description =
           "ours, one source for nvcc and hipcc (kernels/portable): f32 FMAs on decoded e4m3, per-128-K promotion; "
           "the HIP backend's portable path, a correctness baseline rather than a fast kernel"});
  entry.profiled_by_default = false;  // slow by design: profiled when named with --kernel
  entry.unsupported_reason = portable::portable_fp8_blockscale_unsupported_reason;
  entry.describe_config = [](const GemmShape&) { return std::string("64x64_f32fma"); };
  entry.config_for = [](const GemmShape&) {
    return KernelConfig::plain_tile(portable::kPortableTile, portable::kPortableTile);
  };
  entry.open = [name, layout](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    require_supported_weights(
        name, shape,
        portable::portable_fp8_blockscale_unsupported_reason(GemmShape{1, shape.n, shape.k, shape.batch_count}));
    return std::make_unique<PortableFp8Session>(as_cuda_device(device), shape, seed, layout);
  };
  return entry;
}

}  // namespace

KernelEntry portable_fp8_blockscale_entry() { return portable_entry("portable_fp8_blockscale", BLayout::row_major); }

KernelEntry portable_fp8_blockscale_bpreshuffle_entry() {
  KernelEntry entry = portable_entry("portable_fp8_blockscale_bpreshuffle", BLayout::mfma_preshuffled);
  entry.formats = "A e4m3 1x128 f32 scales, B e4m3 128x128 f32 scales, B pre-shuffled for the 32x32x16 FP8 MFMA "
                  "(4 KB tiles of 32 columns x 128 K), C bf16";
  entry.description =
      "ours, one source for nvcc and hipcc: portable_fp8_blockscale reading B in the MFMA pre-shuffled layout of "
      "hip_fp8_blockscale_bpreshuffle (checks the shuffle on NVIDIA GPUs; not a fast kernel)";
  return entry;
}

}  // namespace shapescope::kernels::cuda
