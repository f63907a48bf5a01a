#include "kernels/cpu/cpu_scaled_gemm.hpp"

#include <fmt/format.h>

#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_scaled_operand.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace shapescope::kernels::cpu {

namespace {

struct ScaledWeights {
  WeightShape shape;
  uint64_t seed = 0;
  CpuScaledOperand operand;
};

class ScaledGemm final : public CpuPreparedGemm {
 public:
  ScaledGemm(const std::string& kernel, OperandFormat format, const ScaledWeights& weights, int64_t m, uint64_t seed,
             int threads)
      : CpuPreparedGemm({format, {m, weights.shape.n, weights.shape.k, weights.shape.batch_count}, seed, weights.seed},
                        threads,
                        fmt::format("{}({} {}, B dequantized per 128 K columns in the run, eigen sgemm, {} threads)",
                                    kernel, to_string(block_format_of(format)),
                                    operand_encodings(format).a.scaled() ? "A dequantized" : "A bf16", threads)),
        weights_(weights),
        a_decoded_(size_t(weights.shape.batch_count * m * weights.shape.k)) {
    const OperandEncoding a = operand_encodings(format).a;
    const GemmShape& s = shape();
    if (a.scaled()) {
      a_scaled_.emplace(a, synthetic::kAStreams, seed, s.batch_count, m, s.k, threads);
    } else {
      a_bf16_ = bf16_values(seed, synthetic::Stream::a_bf16, s.batch_count, m, s.k, threads);
    }
  }

  void run() override {
    const int64_t m = shape().m, k = shape().k;
    parallel_for(threads_, shape().batch_count * m, [&](int64_t row) {
      float* out = a_decoded_.data() + row * k;
      if (a_scaled_) {
        a_scaled_->dequantize(row / m, row % m, 0, k, out);
      } else {
        for (int64_t col = 0; col < k; ++col) out[col] = decode_bf16(a_bf16_[size_t(row * k + col)]);
      }
    });
    compute_output_tiles([&](int64_t batch, int64_t row0, int64_t rows, int64_t col0, int64_t width) {
      return scaled_weight_columns(a_decoded_.data() + (batch * m + row0) * k, rows, k, weights_.operand, batch, col0,
                                   width);
    });
  }

 private:
  const ScaledWeights& weights_;
  std::optional<CpuScaledOperand> a_scaled_;
  std::vector<uint16_t> a_bf16_;
  std::vector<float> a_decoded_;  // scratch, rewritten by every run
};

class ScaledSession final : public GemmSession {
 public:
  ScaledSession(std::string kernel, OperandFormat format, const WeightShape& shape, uint64_t seed, int threads)
      : kernel_(std::move(kernel)),
        format_(format),
        threads_(threads),
        weights_{shape, seed,
                 CpuScaledOperand(operand_encodings(format).b, synthetic::kBStreams, seed, shape.batch_count, shape.n,
                                  shape.k, threads)} {}

  std::size_t activation_bytes(int64_t m) const override {
    const WeightShape& s = weights_.shape;
    // A as stored (at most bf16) + decoded floats + bf16 output
    return std::size_t(s.batch_count * (m * s.k * 6 + m * s.n * 2));
  }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    return std::make_unique<ScaledGemm>(kernel_, format_, weights_, m, seed, threads_);
  }

 private:
  std::string kernel_;
  OperandFormat format_;
  int threads_;
  ScaledWeights weights_;
};

}  // namespace

std::unique_ptr<GemmSession> open_scaled_session(const std::string& kernel, OperandFormat format,
                                                 const WeightShape& shape, uint64_t seed, int threads) {
  return std::make_unique<ScaledSession>(kernel, format, shape, seed, threads);
}

}  // namespace shapescope::kernels::cpu
