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

class A16w8Gemm final : public CpuPreparedGemm {
 public:
  A16w8Gemm(const A16w8Weights& weights, int64_t m, uint64_t seed, int threads)
      : CpuPreparedGemm({OperandFormat::a16w8_blockscale,
                         {m, weights.shape.n, weights.shape.k, weights.shape.batch_count}, seed, weights.seed},
                        threads,
                        fmt::format("cpu_a16w8_blockscale(B dequantized per 128x128 block in the run, eigen sgemm, "
                                    "{} threads)",
                                    threads)),
        weights_(weights),
        a_values_(bf16_values(seed, Stream::a_bf16, shape().batch_count, m, shape().k, threads)),
        a_decoded_(a_values_.size()) {}

  // bf16 values + decoded floats + bf16 output
  static std::size_t activation_bytes(const WeightShape& s, int64_t m) {
    return std::size_t(s.batch_count * (m * s.k * 6 + m * s.n * 2));
  }

  void run() override {
    const auto& table = e4m3_table();
    const int64_t m = shape().m, n = shape().n, k = shape().k, k_blocks = blocks(k), n_blocks = blocks(n);
    parallel_for(threads_, shape().batch_count * m, [&](int64_t row) {
      for (int64_t i = row * k; i < (row + 1) * k; ++i) a_decoded_[size_t(i)] = decode_bf16(a_values_[size_t(i)]);
    });
    parallel_for(threads_, shape().batch_count * n_blocks, [&](int64_t task) {
      const int64_t batch = task / n_blocks, n_block = task % n_blocks;
      const int64_t col0 = n_block * kScaleBlock, width = std::min(kScaleBlock, n - col0);
      RowMajorMatrix accumulator = RowMajorMatrix::Zero(m, width);
      RowMajorMatrix weight_block(width, kScaleBlock);
      for (int64_t k_block = 0; k_block < k_blocks; ++k_block) {
        const int64_t k0 = k_block * kScaleBlock, depth = std::min(kScaleBlock, k - k0);
        const float scale = weights_.scales[size_t((batch * n_blocks + n_block) * k_blocks + k_block)];
        for (int64_t row = 0; row < width; ++row) {
          const uint8_t* codes = weights_.codes.data() + (batch * n + col0 + row) * k + k0;
          for (int64_t col = 0; col < depth; ++col) weight_block(row, col) = table[codes[col]] * scale;
        }
        const ConstBlockMap a(a_decoded_.data() + batch * m * k + k0, m, depth, Eigen::OuterStride<>(k));
        accumulator.noalias() += a * weight_block.leftCols(depth).transpose();
      }
      store_tile(batch, col0, accumulator);
    });
  }

 private:
  const A16w8Weights& weights_;
  std::vector<uint16_t> a_values_;
  std::vector<float> a_decoded_;  // scratch, rewritten by every run
};

}  // namespace

KernelEntry cpu_a16w8_blockscale_entry() {
  KernelEntry entry = cpu_kernel_entry<A16w8Weights, A16w8Gemm>(
      "cpu_a16w8_blockscale", "a16w8", "A bf16, B e4m3 128x128 f32 scales, C bf16",
      "weights dequantized per 128x128 block inside the run, Eigen sgemm, fp32 accumulation");
  entry.formats_taken = {BlockFormatId::fp8_blockscale};
  entry.describe_config = [](const GemmShape& shape) {
    return fmt::format("{} tiles of M{}xN128, B dequantized in {} K blocks of 128", blocks(shape.n) * shape.batch_count,
                       shape.m, blocks(shape.k));
  };
  entry.config_for = [](const GemmShape& shape) { return KernelConfig::plain_tile(int(shape.m), int(kScaleBlock)); };
  return entry;
}

}  // namespace shapescope::kernels::cpu
