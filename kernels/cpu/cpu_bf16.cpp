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

class Bf16Gemm final : public CpuBf16ActivationGemm {
 public:
  Bf16Gemm(const Bf16Weights& weights, int64_t m, uint64_t seed, int threads)
      : CpuBf16ActivationGemm({OperandFormat::bf16, {m, weights.shape.n, weights.shape.k, weights.shape.batch_count},
                               seed, weights.seed},
                              threads, fmt::format("cpu_bf16(eigen sgemm, {} threads)", threads)),
        weights_(weights) {}

  void run() override {
    const int64_t m = shape().m, n = shape().n, k = shape().k;
    widen_activations();
    compute_output_tiles([&](int64_t batch, int64_t row0, int64_t rows, int64_t col0, int64_t width) {
      const ConstBlockMap a(a_decoded_.data() + (batch * m + row0) * k, rows, k, Eigen::OuterStride<>(k));
      const ConstBlockMap b(weights_.decoded.data() + (batch * n + col0) * k, width, k, Eigen::OuterStride<>(k));
      RowMajorMatrix tile(rows, width);
      tile.noalias() = a * b.transpose();
      return tile;
    });
  }

 private:
  const Bf16Weights& weights_;
};

}  // namespace

KernelEntry cpu_bf16_entry() {
  KernelEntry entry = cpu_kernel_entry<Bf16Weights, Bf16Gemm>(
      {.name = "cpu_bf16", .dtype = "bf16", .formats = "A bf16, B bf16, C bf16", .formats_taken = {BlockFormatId::bf16},
       .description = "dense baseline: Eigen sgemm on bf16 widened to float, fp32 accumulation"});
  entry.describe_config = [](const GemmShape& shape) {
    return fmt::format("{} tiles of M{}xN{}, full K={}", blocks(shape.n) * shape.batch_count, shape.m, kTileN, shape.k);
  };
  return entry;
}

}  // namespace shapescope::kernels::cpu
