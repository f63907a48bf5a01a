// A plugin kernel on the CPU backend: shapescope's synthetic operands in host memory,
// laid out as the plugin asked, its run() timed, its bf16 output checked like ours.
#include <cstring>

#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/plugin_kernels.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels {

namespace {

using synthetic::Stream;

// Codes or bf16 bits of A or B, row-major [batch][rows][k], as bytes.
std::vector<uint8_t> operand_bytes(bool fp8, uint64_t seed, Stream codes, Stream bf16, int64_t batch, int64_t rows,
                                   int64_t k, int threads) {
  if (fp8) return cpu::fp8_codes(seed, codes, batch, rows, k, threads);
  const std::vector<uint16_t> values = cpu::bf16_values(seed, bf16, batch, rows, k, threads);
  std::vector<uint8_t> bytes(values.size() * sizeof(uint16_t));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// 1x128 scales of A (outer = rows of M) or 128x128 scales of B (outer = row blocks of N) at the plugin's layout;
// padding floats stay 0.
std::vector<float> scales_at(const PluginScaleLayout& layout, uint64_t seed, Stream stream, int64_t batch,
                             int64_t outer, int64_t k) {
  std::vector<float> scales(std::size_t(layout.floats), 0.0f);
  const int64_t kgroups = synthetic::blocks(k);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t g = 0; g < kgroups; ++g)
        scales[std::size_t(b * layout.batch + o * layout.outer + g * layout.kgroup)] =
            synthetic::block_scale(seed, stream, uint64_t((b * outer + o) * kgroups + g));
  return scales;
}

struct PluginWeights {
  WeightShape shape;
  uint64_t seed = 0;
  std::vector<uint8_t> b;
  std::vector<float> b_scales;
  PluginHostOperand b_coded;  // ABI version 2 formats: B with its one-byte scale codes (b stays empty)
};

template <typename T>
const T* data_or_null(const std::vector<T>& values) {
  return values.empty() ? nullptr : values.data();
}

class PluginCpuGemm final : public cpu::CpuPreparedGemm {
 public:
  PluginCpuGemm(std::shared_ptr<PluginKernel> kernel, const PluginWeights& weights, int64_t m, uint64_t seed,
                int threads)
      : CpuPreparedGemm({kernel->format, {m, weights.shape.n, weights.shape.k, weights.shape.batch_count}, seed,
                         weights.seed},
                        threads, kernel->name),
        kernel_(std::move(kernel)) {
    const GemmShape& s = shape();
    if (uses_scale_codes(kernel_->format)) {
      a_coded_ = plugin_host_operand(operand_encodings(kernel_->format).a, synthetic::kAStreams, seed, s.batch_count,
                                     m, s.k);
      operands_.a = a_coded_.codes.data();
      operands_.a_scale_codes = data_or_null(a_coded_.scale_codes);
      operands_.a_tensor_scales = data_or_null(a_coded_.tensor_scales);
      operands_.b = weights.b_coded.codes.data();
      operands_.b_scale_codes = data_or_null(weights.b_coded.scale_codes);
      operands_.b_tensor_scales = data_or_null(weights.b_coded.tensor_scales);
    } else {
      const bool fp8_a = kernel_->format == OperandFormat::fp8_blockscale;
      a_ = operand_bytes(fp8_a, seed, Stream::a_codes, Stream::a_bf16, s.batch_count, m, s.k, threads);
      if (fp8_a) {
        a_scales_ = scales_at(plugin_a_scale_layout(s, kernel_->abi.flags), seed, Stream::a_scales, s.batch_count,
                              m, s.k);
      }
      operands_.a = a_.data();
      operands_.a_scales = data_or_null(a_scales_);
      operands_.b = weights.b.data();
      operands_.b_scales = data_or_null(weights.b_scales);
    }
    operands_.shape = {s.m, s.n, s.k, s.batch_count};
    operands_.c = output_batch(0);
    operands_.stream = nullptr;
    handle_ = plugin_prepare(*kernel_, operands_);
  }
  ~PluginCpuGemm() override { plugin_release(*kernel_, handle_); }
  PluginCpuGemm(const PluginCpuGemm&) = delete;
  PluginCpuGemm& operator=(const PluginCpuGemm&) = delete;

  void run() override { plugin_run(*kernel_, handle_, operands_); }
  std::string launch_name() const override { return plugin_launch_name(*kernel_, handle_); }

 private:
  std::shared_ptr<PluginKernel> kernel_;
  std::vector<uint8_t> a_;
  std::vector<float> a_scales_;
  PluginHostOperand a_coded_;
  shapescope_operands operands_{};
  void* handle_ = nullptr;
};

class PluginCpuSession final : public GemmSession {
 public:
  PluginCpuSession(std::shared_ptr<PluginKernel> kernel, const WeightShape& shape, uint64_t seed, int threads)
      : kernel_(std::move(kernel)), threads_(threads) {
    weights_.shape = shape;
    weights_.seed = seed;
    if (uses_scale_codes(kernel_->format)) {
      weights_.b_coded = plugin_host_operand(operand_encodings(kernel_->format).b, synthetic::kBStreams, seed,
                                             shape.batch_count, shape.n, shape.k);
      return;
    }
    const bool fp8_b = kernel_->format != OperandFormat::bf16;
    weights_.b = operand_bytes(fp8_b, seed, Stream::b_codes, Stream::b_bf16, shape.batch_count, shape.n, shape.k,
                               threads);
    if (fp8_b) {
      weights_.b_scales = scales_at(plugin_b_scale_layout(shape, kernel_->abi.flags), seed, Stream::b_scales,
                                    shape.batch_count, synthetic::blocks(shape.n), shape.k);
    }
  }

  std::size_t activation_bytes(int64_t m) const override {
    return plugin_activation_bytes(weights_.shape, kernel_->format, m);
  }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    return std::make_unique<PluginCpuGemm>(kernel_, weights_, m, seed, threads_);
  }

 private:
  std::shared_ptr<PluginKernel> kernel_;
  int threads_;
  PluginWeights weights_;
};

}  // namespace

std::unique_ptr<GemmSession> open_cpu_plugin_session(const std::shared_ptr<PluginKernel>& kernel, Device& device,
                                                     const WeightShape& shape, uint64_t seed) {
  return std::make_unique<PluginCpuSession>(kernel, shape, seed, device.info().multiprocessors);
}

}  // namespace shapescope::kernels
