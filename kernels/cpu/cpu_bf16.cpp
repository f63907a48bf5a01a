// cpu_bf16: the dense baseline. A and B are bf16; the CPU has no bf16 GEMM, so
// B is widened to float once at preparation (its layout) and A in every run,
// then one sgemm over the whole K per 128-column output tile.
#include <fmt/format.h>

#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/parallel_for.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cpu {

namespace {

using synthetic::blocks;
using synthetic::Stream;

struct Bf16Weights {
  Bf16Weights(const WeightShape& shape, uint64_t seed, int threads)
      : shape(shape),
        seed(seed),
        decoded(decode_all(bf16_values(seed, Stream::b_bf16, shape.batch_count, shape.n, shape.k, threads), threads)) {}

  WeightShape shape;
  uint64_t seed = 0;
  std::vector<float> decoded;  // [batch][n][k]
};

class Bf16Gemm final : public CpuPreparedGemm {
 public:
  Bf16Gemm(const Bf16Weights& weights, int64_t m, uint64_t seed, int threads)
      : CpuPreparedGemm({OperandFormat::bf16, {m, weights.shape.n, weights.shape.k, weights.shape.batch_count}, seed,
                         weights.seed},
                        threads, fmt::format("cpu_bf16(eigen sgemm, {} threads)", threads)),
        weights_(weights),
        a_values_(bf16_values(seed, Stream::a_bf16, shape().batch_count, m, shape().k, threads)),
        a_decoded_(a_values_.size()) {}

  // bf16 values + decoded floats + bf16 output
  static std::size_t activation_bytes(const WeightShape& s, int64_t m) {
    return std::size_t(s.batch_count * (m * s.k * 6 + m * s.n * 2));
  }

  void run() override {
    const int64_t m = shape().m, n = shape().n, k = shape().k, n_tiles = blocks(n);
    parallel_for(threads_, shape().batch_count * m, [&](int64_t row) {
      for (int64_t i = row * k; i < (row + 1) * k; ++i) a_decoded_[size_t(i)] = decode_bf16(a_values_[size_t(i)]);
    });
    parallel_for(threads_, shape().batch_count * n_tiles, [&](int64_t task) {
      const int64_t batch = task / n_tiles, col0 = (task % n_tiles) * kTileN, width = std::min(kTileN, n - col0);
      const ConstBlockMap a(a_decoded_.data() + batch * m * k, m, k, Eigen::OuterStride<>(k));
      const ConstBlockMap b(weights_.decoded.data() + (batch * n + col0) * k, width, k, Eigen::OuterStride<>(k));
      RowMajorMatrix tile(m, width);
      tile.noalias() = a * b.transpose();
      store_tile(batch, col0, tile);
    });
  }

 private:
  const Bf16Weights& weights_;
  std::vector<uint16_t> a_values_;
  std::vector<float> a_decoded_;  // scratch, rewritten by every run
};

}  // namespace

KernelEntry cpu_bf16_entry() {
  KernelEntry entry = cpu_kernel_entry<Bf16Weights, Bf16Gemm>(
      "cpu_bf16", "bf16", "A bf16, B bf16, C bf16",
      "dense baseline: Eigen sgemm on bf16 widened to float, fp32 accumulation");
  entry.formats_taken = {BlockFormatId::bf16};
  entry.describe_config = [](const GemmShape& shape) {
    return fmt::format("{} tiles of M{}xN{}, full K={}", blocks(shape.n) * shape.batch_count, shape.m, kTileN, shape.k);
  };
  entry.config_for = [](const GemmShape& shape) { return KernelConfig::plain_tile(int(shape.m), int(kTileN)); };
  return entry;
}

}  // namespace shapescope::kernels::cpu
