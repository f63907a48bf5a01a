#include "kernels/cpu/cpu_scaled_operand.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "kernels/cpu/parallel_for.hpp"

namespace shapescope::kernels::cpu {

namespace {

const std::array<float, 16>& e2m1_table() {
  static const std::array<float, 16> table = decode_table<16>(decode_e2m1);
  return table;
}

}  // namespace

CpuScaledOperand::CpuScaledOperand(const OperandEncoding& encoding, const synthetic::OperandStreams& streams,
                                   uint64_t seed, int64_t batch_count, int64_t rows, int64_t k, int threads)
    : encoding_(encoding), rows_(rows), k_(k) {
  if (!encoding.scaled() || encoding.block_rows != 1 || element_bits(encoding.element) > 8)
    throw std::logic_error("CpuScaledOperand: the encoding must have 1 x block_k scales and 8-bit or 4-bit codes");
  const bool fp4 = element_bits(encoding.element) == 4;
  row_bytes_ = fp4 ? (k + 1) / 2 : k;
  k_blocks_ = synthetic::blocks(k, encoding.block_k);
  packed_.assign(size_t(batch_count * rows * row_bytes_), 0);
  scales_.assign(size_t(batch_count * rows * k_blocks_), 0.0f);
  parallel_for(threads, batch_count * rows, [&](int64_t flat_row) {
    const int64_t batch = flat_row / rows;
    const uint64_t first = uint64_t(flat_row * k);  // synthetic index of (batch, row, 0)
    uint8_t* bytes = packed_.data() + flat_row * row_bytes_;
    for (int64_t col = 0; col < k; ++col) {
      const uint8_t code = uint8_t(synthetic::element_code(encoding, streams, seed, first + uint64_t(col)));
      if (fp4) {
        bytes[col / 2] = uint8_t(bytes[col / 2] | (col % 2 ? code << 4 : code));
      } else {
        bytes[col] = code;
      }
    }
    const float tensor = synthetic::tensor_scale_value(encoding, streams, seed, batch);
    for (int64_t kb = 0; kb < k_blocks_; ++kb)
      scales_[size_t(flat_row * k_blocks_ + kb)] =
          synthetic::block_scale_value(encoding, streams, seed, uint64_t(flat_row * k_blocks_ + kb)) * tensor;
  });
}

void CpuScaledOperand::dequantize(int64_t batch, int64_t row, int64_t k0, int64_t depth, float* out) const {
  const int64_t flat_row = batch * rows_ + row;
  const uint8_t* bytes = packed_.data() + flat_row * row_bytes_;
  const float* scales = scales_.data() + flat_row * k_blocks_;
  if (encoding_.element == ElementType::e2m1) {
    const auto& table = e2m1_table();
    for (int64_t col = k0; col < k0 + depth; ++col)
      out[col - k0] = table[unpack_e2m1(bytes[col / 2], col)] * scales[col / encoding_.block_k];
    return;
  }
  const auto& table = e4m3_table();
  for (int64_t col = k0; col < k0 + depth; ++col) out[col - k0] = table[bytes[col]] * scales[col / encoding_.block_k];
}

RowMajorMatrix scaled_weight_columns(const float* a, int64_t rows, int64_t k, const CpuScaledOperand& weights,
                                     int64_t batch, int64_t col0, int64_t width) {
  constexpr int64_t kDepth = 128;
  RowMajorMatrix accumulator = RowMajorMatrix::Zero(rows, width);
  RowMajorMatrix weight_block(width, kDepth);
  for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
    const int64_t depth = std::min(kDepth, k - k0);
    for (int64_t row = 0; row < width; ++row) weights.dequantize(batch, col0 + row, k0, depth, &weight_block(row, 0));
    const ConstBlockMap a_block(a + k0, rows, depth, Eigen::OuterStride<>(k));
    accumulator.noalias() += a_block * weight_block.leftCols(depth).transpose();
  }
  return accumulator;
}

std::optional<std::string> scaled_k_problem(BlockFormatId format, int64_t k) {
  const std::string problem = k_packing_problem(block_format(format).weights, k);
  if (problem.empty()) return std::nullopt;
  return problem;
}

}  // namespace shapescope::kernels::cpu
