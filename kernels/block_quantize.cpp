#include "kernels/block_quantize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/fp4_e2m1.hpp"
#include "kernels/fp8_e4m3.hpp"
#include "kernels/scale_e8m0.hpp"
#include "kernels/synthetic_operands.hpp"

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

namespace {

uint8_t encode_element(ElementType element, float value) {
  switch (element) {
    case ElementType::e2m1: return encode_e2m1(value);
    case ElementType::e4m3: return encode_e4m3(value);
    case ElementType::e5m2: return encode_e5m2(value);
    case ElementType::bf16: break;
  }
  throw std::invalid_argument("quantize_block_scaled: bf16 elements are not block-scaled");
}

double decode_scale(ScaleType scale, uint8_t code) {
  return scale == ScaleType::ue4m3 ? double(decode_e4m3(code)) : double(decode_e8m0(code));
}

}  // namespace

double BlockScaledQuantized::scale_at(int64_t row, int64_t col) const {
  const uint8_t code = scale_codes[size_t(row * ceil_div(cols, encoding.block_k) + col / encoding.block_k)];
  return decode_scale(encoding.scale, code) * double(tensor_scale);
}

double BlockScaledQuantized::dequantized(int64_t row, int64_t col) const {
  return double(synthetic::decode_element(encoding.element, codes[size_t(row * cols + col)])) * scale_at(row, col);
}

BlockScaledQuantized quantize_block_scaled(std::span<const float> values, int64_t rows, int64_t cols,
                                           const OperandEncoding& encoding) {
  const bool mx = encoding.scale == ScaleType::e8m0, nv = encoding.scale == ScaleType::ue4m3;
  if (int64_t(values.size()) != rows * cols || (!mx && !nv) || encoding.block_rows != 1 || encoding.block_k <= 0) {
    throw std::invalid_argument(
        "quantize_block_scaled: values must hold rows*cols floats, the encoding 1 x block_k e8m0 or ue4m3 scales");
  }
  BlockScaledQuantized q;
  q.encoding = encoding;
  q.rows = rows;
  q.cols = cols;
  q.codes.resize(values.size());
  const int64_t k_blocks = ceil_div(cols, encoding.block_k);
  q.scale_codes.resize(size_t(rows * k_blocks));
  if (encoding.tensor_scale) {
    float amax = 0;
    for (float value : values) amax = std::max(amax, std::fabs(value));
    q.tensor_scale = amax > 0 ? amax / (kE4m3Max * kE2m1Max) : 1.0f;
  }
  const float element_largest = element_max(encoding.element);
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t kb = 0; kb < k_blocks; ++kb) {
      const int64_t begin = row * cols + kb * encoding.block_k, end = row * cols + std::min(cols, (kb + 1) * encoding.block_k);
      float amax = 0;
      for (int64_t i = begin; i < end; ++i) amax = std::max(amax, std::fabs(values[size_t(i)]));
      uint8_t scale_code;
      if (mx) {
        scale_code = amax > 0 ? mx_shared_scale(amax, element_emax(encoding.element)) : e8m0_code(0);
      } else {
        scale_code = encode_e4m3(amax / element_largest / q.tensor_scale);
      }
      q.scale_codes[size_t(row * k_blocks + kb)] = scale_code;
      const double scale = decode_scale(encoding.scale, scale_code) * double(q.tensor_scale);
      for (int64_t i = begin; i < end; ++i)
        q.codes[size_t(i)] = scale > 0 ? encode_element(encoding.element, float(double(values[size_t(i)]) / scale)) : 0;
    }
  }
  return q;
}

}  // namespace shapescope::kernels
