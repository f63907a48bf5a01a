#include "kernels/cpu/cpu_fp8_columns.hpp"

#include <algorithm>

#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cpu {

std::vector<float> decoded_fp8_weights(uint64_t seed, int64_t batches, int64_t n, int64_t k, int threads) {
  return decode_fp8_all(fp8_codes(seed, synthetic::Stream::b_codes, batches, n, k, threads), threads);
}

std::vector<float> fp8_weight_scales(uint64_t seed, int64_t batches, int64_t n, int64_t k) {
  return block_scales(seed, synthetic::Stream::b_scales, batches * synthetic::blocks(n) * synthetic::blocks(k));
}

RowMajorMatrix fp8_blockscale_columns(const Fp8ColumnsProblem& p) {
  const int64_t k_blocks = synthetic::blocks(p.k);
  RowMajorMatrix accumulator = RowMajorMatrix::Zero(p.rows, p.width);
  RowMajorMatrix partial(p.rows, p.width);
  Eigen::VectorXf row_scale(p.rows);
  for (int64_t k_block = 0; k_block < k_blocks; ++k_block) {
    const int64_t k0 = k_block * synthetic::kScaleBlock, depth = std::min(synthetic::kScaleBlock, p.k - k0);
    const ConstBlockMap a(p.a + k0, p.rows, depth, Eigen::OuterStride<>(p.k));
    const ConstBlockMap b(p.b + k0, p.width, depth, Eigen::OuterStride<>(p.k));
    partial.noalias() = a * b.transpose();
    const float b_scale = p.b_scales[k_block];
    for (int64_t row = 0; row < p.rows; ++row) row_scale[row] = p.a_scales[row * k_blocks + k_block] * b_scale;
    accumulator.noalias() += row_scale.asDiagonal() * partial;
  }
  return accumulator;
}

}  // namespace shapescope::kernels::cpu
