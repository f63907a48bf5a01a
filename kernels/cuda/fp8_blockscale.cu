// fp8_blockscale: our block-scaled FP8 GEMM for Hopper (wgmma e4m3, DeepGEMM-style
// promotion), with B row-major; the session here also serves the pre-shuffled entry.
#include "kernels/cuda/fp8_blockscale.hpp"

#include <stdexcept>

#include "common/user_error.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_operands.cuh"
#include "kernels/cuda/fp8_blockscale_kernel.cuh"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

template <int kBlockM, int kStages, bool kPreshuffledB>
void launch_instance(const Fp8BlockscaleParams& params, const Fp8BlockscaleConfig& config, cudaStream_t stream) {
  const auto kernel = fp8_blockscale_kernel<kBlockM, kStages, kPreshuffledB>;
  static const bool shared_limit_raised = [&] {  // above 48 KB only after opting in, once per instance
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, config.shared_bytes()));
    return true;
  }();
  (void)shared_limit_raised;
  const dim3 grid(unsigned((params.n + config.block_n - 1) / config.block_n),
                  unsigned((params.m + config.block_m - 1) / config.block_m), unsigned(config.split_k));
  kernel<<<grid, config.threads(), config.shared_bytes(), stream>>>(params);
  CUDA_CHECK_LAUNCH();
}

void launch_fp8_blockscale(const Fp8BlockscaleParams& params, const Fp8BlockscaleConfig& config, WeightOrder order,
                           cudaStream_t stream) {
  if (config.stages != 4 || config.block_n != 128) throw std::logic_error("fp8_blockscale: no kernel for this config");
  const bool preshuffled = order == WeightOrder::preshuffled;
  if (config.block_m == 64) {
    preshuffled ? launch_instance<64, 4, true>(params, config, stream)
                : launch_instance<64, 4, false>(params, config, stream);
  } else if (config.block_m == 128) {
    preshuffled ? launch_instance<128, 4, true>(params, config, stream)
                : launch_instance<128, 4, false>(params, config, stream);
  } else {
    throw std::logic_error("fp8_blockscale: no kernel for block_m " + std::to_string(config.block_m));
  }
}

class Fp8BlockscalePrepared final : public CudaPreparedGemm {
 public:
  Fp8BlockscalePrepared(CudaDevice& device, const ReferenceProblem& problem, const uint8_t* b, const float* b_scales,
                        WeightOrder order)
      : CudaPreparedGemm(device, problem),
        order_(order),
        config_(choose_fp8_blockscale_config(problem.shape, device.info().multiprocessors)) {
    const GemmShape& s = problem.shape;
    const int64_t kblocks = synthetic::blocks(s.k);
    a_ = DeviceBuffer<uint8_t>(std::size_t(s.m * s.k));
    a_scales_ = DeviceBuffer<float>(std::size_t(s.m * kblocks));
    c_ = DeviceBuffer<uint16_t>(std::size_t(s.m * s.n));
    const cudaStream_t stream = device.stream();
    fill_fp8_codes(a_.data(), problem.seed_a, synthetic::a_codes, 1, s.m, s.k, stream);
    fill_a_scales(a_scales_.data(), problem.seed_a, 1, s.m, s.k, ScaleStrides{s.m * kblocks, kblocks, 1}, stream);
    if (config_.split_k > 1) {
      split_sums_ = DeviceBuffer<float>(std::size_t(s.m * s.n));
      CUDA_CHECK(cudaMemsetAsync(split_sums_.data(), 0, split_sums_.bytes(), stream));
      const int64_t tiles = (s.m + config_.block_m - 1) / config_.block_m * ((s.n + config_.block_n - 1) / config_.block_n);
      arrivals_ = DeviceBuffer<int>(std::size_t(tiles));
      CUDA_CHECK(cudaMemsetAsync(arrivals_.data(), 0, arrivals_.bytes(), stream));
    }
    set_output(c_.data(), s.m * s.n, OutputStrides{s.m * s.n, s.n, 1});
    params_ = Fp8BlockscaleParams{a_.data(), a_scales_.data(), b, b_scales, c_.data(), split_sums_.data(),
                                  arrivals_.data(), int(s.m), int(s.n), int(s.k), config_.kblocks_per_split};
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override { launch_fp8_blockscale(params_, config_, order_, device_.stream()); }
  std::string launch_name() const override {
    return std::string(order_ == WeightOrder::preshuffled ? "fp8_blockscale_bpreshuffle/" : "fp8_blockscale/") +
           describe(config_);
  }

 private:
  WeightOrder order_;
  Fp8BlockscaleConfig config_;
  DeviceBuffer<uint8_t> a_;
  DeviceBuffer<float> a_scales_;
  DeviceBuffer<uint16_t> c_;
  DeviceBuffer<float> split_sums_;
  DeviceBuffer<int> arrivals_;
  Fp8BlockscaleParams params_;
};

class Fp8BlockscaleSession final : public GemmSession {
 public:
  Fp8BlockscaleSession(CudaDevice& device, const WeightShape& shape, uint64_t seed, WeightOrder order)
      : device_(device), shape_(shape), seed_(seed), order_(order) {
    const int64_t kblocks = synthetic::blocks(shape.k);
    const int64_t nblocks = synthetic::blocks(shape.n);
    const cudaStream_t stream = device.stream();
    DeviceBuffer<uint8_t> row_major(std::size_t(shape.n * shape.k));
    fill_fp8_codes(row_major.data(), seed, synthetic::b_codes, 1, shape.n, shape.k, stream);
    if (order == WeightOrder::preshuffled) {
      b_ = DeviceBuffer<uint8_t>(std::size_t(preshuffled_b_bytes(shape.n, shape.k)));
      preshuffle_b(row_major.data(), b_.data(), shape.n, shape.k, stream);
      CUDA_CHECK(cudaStreamSynchronize(stream));  // before row_major is freed
    } else {
      b_ = std::move(row_major);
    }
    b_scales_ = DeviceBuffer<float>(std::size_t(nblocks * kblocks));
    fill_b_scales(b_scales_.data(), seed, 1, shape.n, shape.k, ScaleStrides{nblocks * kblocks, kblocks, 1}, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  std::size_t activation_bytes(int64_t m) const override {
    const GemmShape shape{m, shape_.n, shape_.k, 1};
    const Fp8BlockscaleConfig config = choose_fp8_blockscale_config(shape, device_.info().multiprocessors);
    const int64_t split_bytes = config.split_k > 1 ? m * shape_.n * 4 : 0;
    return std::size_t(m * shape_.k + m * synthetic::blocks(shape_.k) * 4 + m * shape_.n * 2 + split_bytes);
  }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{OperandFormat::fp8_blockscale, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    return std::make_unique<Fp8BlockscalePrepared>(device_, problem, b_.data(), b_scales_.data(), order_);
  }

 private:
  CudaDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  WeightOrder order_;
  DeviceBuffer<uint8_t> b_;
  DeviceBuffer<float> b_scales_;
};

}  // namespace

std::unique_ptr<GemmSession> open_fp8_blockscale_session(Device& device, const WeightShape& shape, uint64_t seed,
                                                         WeightOrder order) {
  if (auto reason = fp8_blockscale_unsupported_reason(GemmShape{1, shape.n, shape.k, shape.batch_count}))
    throw UserError("fp8_blockscale cannot run N=" + std::to_string(shape.n) + " K=" + std::to_string(shape.k) +
                    ": " + *reason + "; pick another kernel for this shape");
  return std::make_unique<Fp8BlockscaleSession>(as_cuda_device(device), shape, seed, order);
}

std::optional<std::string> fp8_blockscale_unsupported_reason(const GemmShape& shape) {
  if (shape.batch_count != 1) return "batch_count=" + std::to_string(shape.batch_count) + " (not batched)";
  if (shape.k <= 0 || shape.k % 16 != 0)
    return "K=" + std::to_string(shape.k) + " is not a positive multiple of 16 (16-byte row copies)";
  if (shape.m < 1 || shape.n < 1) return "M and N must be positive";
  if (shape.m * shape.n > int64_t(INT32_MAX) || shape.n * shape.k > int64_t(INT32_MAX) ||
      shape.m * shape.k > int64_t(INT32_MAX))
    return "an operand over 2^31 elements";
  return std::nullopt;
}

int visible_multiprocessors() {
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || count <= 0) {
    cudaGetLastError();  // clear the sticky "no device" so later checks see their own errors
    return 132;
  }
  return count;
}

KernelEntry fp8_blockscale_entry() {
  KernelEntry entry;
  entry.name = "fp8_blockscale";
  entry.backend = BackendKind::cuda;
  entry.dtype = "fp8";
  entry.formats = "A e4m3 1x128 f32 scales, B e4m3 128x128 f32 scales (row-major), C bf16";
  entry.description =
      "ours: wgmma e4m3 (QGMMA), cp.async 4-stage pipeline, per-128-K promotion outside the tensor cores; "
      "small M streams B with split-K";
  entry.unsupported_reason = fp8_blockscale_unsupported_reason;
  entry.describe_config = [](const GemmShape& shape) {
    return describe(choose_fp8_blockscale_config(shape, visible_multiprocessors()));
  };
  entry.tile_for = [](const GemmShape& shape) {
    const Fp8BlockscaleConfig config = choose_fp8_blockscale_config(shape, visible_multiprocessors());
    return std::vector<int>{config.block_m, config.block_n, config.split_k};
  };
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) {
    return open_fp8_blockscale_session(device, shape, seed, WeightOrder::row_major);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
