// cpu_fp8_blockscale: W8A8 with DeepSeek-style block scales. A is e4m3 with one
// f32 scale per 1x128 group, B is e4m3 with one f32 scale per 128x128 block.
// Preparation (untimed) decodes B's codes to float once: that is the CPU's weight
// layout. Each run decodes A's codes (the kernel reads fp8 activations), then per
// 128-wide K block multiplies the unscaled blocks with an sgemm and promotes the
// partial product into the fp32 accumulator with sa[m,kb] * sb[nb,kb], as the GPU
// kernels do.
#include "kernels/cpu/cpu_kernels.hpp"

#include <fmt/format.h>

#include "kernels/cpu/cpu_fp8_columns.hpp"
#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/parallel_for.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cpu {

namespace {

using synthetic::blocks;
using synthetic::kScaleBlock;
using synthetic::Stream;

using Fp8Weights = DecodedFp8Weights<WeightShape>;

class Fp8Gemm final : public CpuPreparedGemm {
 public:
  Fp8Gemm(const Fp8Weights& weights, int64_t m, uint64_t seed, int threads)
      : CpuPreparedGemm({OperandFormat::fp8_blockscale, {m, weights.shape.n, weights.shape.k, weights.shape.batch_count},
                         seed, weights.seed},
                        threads, fmt::format("cpu_fp8_blockscale(eigen sgemm per K128 block, fp32 promotion, {} threads)",
                                             threads)),
        weights_(weights),
        a_codes_(fp8_codes(seed, Stream::a_codes, shape().batch_count, m, shape().k, threads)),
        a_scales_(block_scales(seed, Stream::a_scales, shape().batch_count * m * blocks(shape().k))),
        a_decoded_(a_codes_.size()) {}

  // codes + decoded floats + scales + bf16 output
  static std::size_t activation_bytes(const WeightShape& s, int64_t m) {
    return std::size_t(s.batch_count * (m * s.k * 5 + m * blocks(s.k) * 4 + m * s.n * 2));
  }

  void run() override {
    const auto& table = e4m3_table();
    const int64_t m = shape().m, n = shape().n, k = shape().k, k_blocks = blocks(k), n_blocks = blocks(n);
    parallel_for(threads_, shape().batch_count * m, [&](int64_t row) {
      for (int64_t i = row * k; i < (row + 1) * k; ++i) a_decoded_[size_t(i)] = table[a_codes_[size_t(i)]];
    });
    compute_output_tiles([&](int64_t batch, int64_t row0, int64_t rows, int64_t col0, int64_t width) {
      const int64_t n_block = col0 / kScaleBlock, first_row = batch * m + row0;
      return fp8_blockscale_columns({a_decoded_.data() + first_row * k, a_scales_.data() + first_row * k_blocks,
                                     weights_.decoded.data() + (batch * n + col0) * k,
                                     weights_.scales.data() + (batch * n_blocks + n_block) * k_blocks, rows, width,
                                     k});
    });
  }

 private:
  const Fp8Weights& weights_;
  std::vector<uint8_t> a_codes_;
  std::vector<float> a_scales_;
  std::vector<float> a_decoded_;  // scratch, rewritten by every run
};

}  // namespace

KernelEntry cpu_fp8_blockscale_entry() {
  KernelEntry entry = cpu_kernel_entry<Fp8Weights, Fp8Gemm>(
      {.name = "cpu_fp8_blockscale", .dtype = "fp8",
       .formats = "A e4m3 1x128 f32 scales, B e4m3 128x128 f32 scales, C bf16",
       .formats_taken = {BlockFormatId::fp8_blockscale},
       .description =
           "Eigen sgemm per 128-wide K block with fp32 scale promotion; A decoded in the run, B at preparation"});
  entry.describe_config = [](const GemmShape& shape) {
    return fmt::format("{} tiles of M{}xN128, {} K blocks of 128", blocks(shape.n) * shape.batch_count, shape.m,
                       blocks(shape.k));
  };
  return entry;
}

}  // namespace shapescope::kernels::cpu
