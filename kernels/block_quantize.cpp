#include "kernels/block_quantize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/fp8_e4m3.hpp"

namespace shapescope::kernels {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

float BlockQuantized::scale_at(int64_t row, int64_t col) const {
  return scales[size_t((row / block_rows) * ceil_div(cols, block_cols) + col / block_cols)];
}

float BlockQuantized::dequantized(int64_t row, int64_t col) const {
  return decode_e4m3(codes[size_t(row * cols + col)]) * scale_at(row, col);
}

BlockQuantized quantize_blocks(std::span<const float> values, int64_t rows, int64_t cols, int64_t block_rows,
                               int64_t block_cols) {
  if (int64_t(values.size()) != rows * cols || block_rows <= 0 || block_cols <= 0) {
    throw std::invalid_argument("quantize_blocks: values must hold rows*cols floats and blocks must be positive");
  }
  BlockQuantized q;
  q.rows = rows;
  q.cols = cols;
  q.block_rows = block_rows;
  q.block_cols = block_cols;
  q.codes.resize(values.size());
  const int64_t row_blocks = ceil_div(rows, block_rows), col_blocks = ceil_div(cols, block_cols);
  q.scales.resize(size_t(row_blocks * col_blocks));
  for (int64_t rb = 0; rb < row_blocks; ++rb) {
    for (int64_t cb = 0; cb < col_blocks; ++cb) {
      const int64_t row_end = std::min(rows, (rb + 1) * block_rows), col_end = std::min(cols, (cb + 1) * block_cols);
      float amax = 0;
      for (int64_t r = rb * block_rows; r < row_end; ++r)
        for (int64_t c = cb * block_cols; c < col_end; ++c) amax = std::max(amax, std::fabs(values[size_t(r * cols + c)]));
      const float scale = amax > 0 ? amax / kE4m3Max : 1.0f;
      q.scales[size_t(rb * col_blocks + cb)] = scale;
      for (int64_t r = rb * block_rows; r < row_end; ++r)
        for (int64_t c = cb * block_cols; c < col_end; ++c)
          q.codes[size_t(r * cols + c)] = encode_e4m3(values[size_t(r * cols + c)] / scale);
    }
  }
  return q;
}

}  // namespace shapescope::kernels
