#include "kernels/cpu/cpu_fp8_columns.hpp"

#include <algorithm>

#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cpu {

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
