// cpu_a16w8_blockscale: bf16 activations, e4m3 weights with 128x128 f32 block
// scales. The kernel's job is dequantizing weights on the fly, so B stays as
// fp8 codes in memory and every run dequantizes each 128x128 block (code * scale)
// right before its sgemm; A's bf16 values are widened to float in the run too.
#include <fmt/format.h>

#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/parallel_for.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cpu {

namespace {

using synthetic::blocks;
using synthetic::kScaleBlock;
using synthetic::Stream;

struct A16w8Weights {
  A16w8Weights(const WeightShape& shape, uint64_t seed, int threads)
      : shape(shape),
        seed(seed),
        codes(fp8_codes(seed, Stream::b_codes, shape.batch_count, shape.n, shape.k, threads)),
        scales(block_scales(seed, Stream::b_scales, shape.batch_count * blocks(shape.n) * blocks(shape.k))) {}

  WeightShape shape;
  uint64_t seed = 0;
  std::vector<uint8_t> codes;  // [batch][n][k]
  std::vector<float> scales;   // [batch][ceil(n/128)][ceil(k/128)]
};

class A16w8Gemm final : public CpuBf16ActivationGemm {
 public:
  A16w8Gemm(const A16w8Weights& weights, int64_t m, uint64_t seed, int threads)
      : CpuBf16ActivationGemm({OperandFormat::a16w8_blockscale,
                               {m, weights.shape.n, weights.shape.k, weights.shape.batch_count}, seed, weights.seed},
                              threads,
                              fmt::format("cpu_a16w8_blockscale(B dequantized per 128x128 block in the run, eigen "
                                          "sgemm, {} threads)",
                                          threads)),
        weights_(weights) {}

  void run() override {
    const auto& table = e4m3_table();
    const int64_t m = shape().m, n = shape().n, k = shape().k, k_blocks = blocks(k), n_blocks = blocks(n);
    widen_activations();
    compute_output_tiles([&](int64_t batch, int64_t row0, int64_t rows, int64_t col0, int64_t width) {
      const int64_t n_block = col0 / kScaleBlock;
      RowMajorMatrix accumulator = RowMajorMatrix::Zero(rows, width);
      RowMajorMatrix weight_block(width, kScaleBlock);
      for (int64_t k_block = 0; k_block < k_blocks; ++k_block) {
        const int64_t k0 = k_block * kScaleBlock, depth = std::min(kScaleBlock, k - k0);
        const float scale = weights_.scales[size_t((batch * n_blocks + n_block) * k_blocks + k_block)];
        for (int64_t row = 0; row < width; ++row) {
          const uint8_t* codes = weights_.codes.data() + (batch * n + col0 + row) * k + k0;
          for (int64_t col = 0; col < depth; ++col) weight_block(row, col) = table[codes[col]] * scale;
        }
        const ConstBlockMap a(a_decoded_.data() + (batch * m + row0) * k + k0, rows, depth, Eigen::OuterStride<>(k));
        accumulator.noalias() += a * weight_block.leftCols(depth).transpose();
      }
      return accumulator;
    });
  }

 private:
  const A16w8Weights& weights_;
};

}  // namespace

KernelEntry cpu_a16w8_blockscale_entry() {
  KernelEntry entry = cpu_kernel_entry<A16w8Weights, A16w8Gemm>(
      {.name = "cpu_a16w8_blockscale", .dtype = "a16w8", .formats = "A bf16, B e4m3 128x128 f32 scales, C bf16",
       .formats_taken = {BlockFormatId::fp8_blockscale},
       .description = "weights dequantized per 128x128 block inside the run, Eigen sgemm, fp32 accumulation"});
  entry.describe_config = [](const GemmShape& shape) {
    return fmt::format("{} tiles of M{}xN128, B dequantized in {} K blocks of 128", blocks(shape.n) * shape.batch_count,
                       shape.m, blocks(shape.k));
  };
  return entry;
}

}  // namespace shapescope::kernels::cpu
