// Float64 reference on the dequantized synthetic operands.
#include "kernels/reference_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels {

namespace {

using synthetic::Stream;

// `count` positions spread evenly over [0, extent), always holding 0 and extent - 1.
std::vector<int64_t> spread(int64_t extent, int64_t count) {
  count = std::clamp<int64_t>(count, std::min<int64_t>(extent, 2), extent);
  std::vector<int64_t> positions;
  positions.reserve(size_t(count));
  for (int64_t i = 0; i < count; ++i) {
    // Even spacing of (extent-1)/(count-1) lands on varying offsets inside 128-wide blocks.
    positions.push_back(count == 1 ? 0 : int64_t(std::llround(double(i) * double(extent - 1) / double(count - 1))));
  }
  positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
  return positions;
}

}  // namespace

std::vector<OutputIndex> sample_output(const GemmShape& shape, int64_t max_elements) {
  std::vector<OutputIndex> indices;
  const int64_t total = shape.batch_count * shape.m * shape.n;
  if (total <= max_elements) {
    indices.reserve(size_t(total));
    for (int64_t b = 0; b < shape.batch_count; ++b)
      for (int64_t row = 0; row < shape.m; ++row)
        for (int64_t col = 0; col < shape.n; ++col) indices.push_back({b, row, col});
    return indices;
  }
  const int64_t min_per_batch = 4;  // the four corners
  const std::vector<int64_t> batches =
      spread(shape.batch_count, std::max<int64_t>(1, max_elements / min_per_batch));
  const int64_t per_batch = std::max<int64_t>(min_per_batch, max_elements / int64_t(batches.size()));
  // Rows and columns in proportion to the output's aspect ratio.
  const int64_t row_count = std::llround(std::sqrt(double(per_batch) * double(shape.m) / double(shape.n)));
  const std::vector<int64_t> rows = spread(shape.m, row_count);
  // The reference dequantizes a K-long B row per sampled column: at most a quarter of the
  // budget in columns keeps small-M checks (one row, thousands of columns) cheap.
  const int64_t col_count = std::min(per_batch / int64_t(rows.size()), std::max<int64_t>(2, per_batch / 4));
  const std::vector<int64_t> cols = spread(shape.n, col_count);
  for (int64_t b : batches)
    for (int64_t row : rows)
      for (int64_t col : cols) indices.push_back({b, row, col});
  return indices;
}

double a_value(const ReferenceProblem& problem, int64_t batch, int64_t row, int64_t col) {
  const GemmShape& s = problem.shape;
  const uint64_t index = synthetic::a_index(batch, row, col, s.m, s.k);
  if (problem.format == OperandFormat::fp8_blockscale) {
    const double code = decode_e4m3(synthetic::fp8_code(problem.seed_a, Stream::a_codes, index));
    const uint64_t scale_index = synthetic::a_scale_index(batch, row, col / synthetic::kScaleBlock, s.m, s.k);
    return code * double(synthetic::block_scale(problem.seed_a, Stream::a_scales, scale_index));
  }
  return decode_bf16(synthetic::bf16_value(problem.seed_a, Stream::a_bf16, index));
}

double b_value(const ReferenceProblem& problem, int64_t batch, int64_t row, int64_t col) {
  const GemmShape& s = problem.shape;
  const uint64_t index = synthetic::b_index(batch, row, col, s.n, s.k);
  if (problem.format == OperandFormat::bf16) {
    return decode_bf16(synthetic::bf16_value(problem.seed_b, Stream::b_bf16, index));
  }
  const double code = decode_e4m3(synthetic::fp8_code(problem.seed_b, Stream::b_codes, index));
  const uint64_t scale_index = synthetic::b_scale_index(batch, row / synthetic::kScaleBlock,
                                                        col / synthetic::kScaleBlock, s.n, s.k);
  return code * double(synthetic::block_scale(problem.seed_b, Stream::b_scales, scale_index));
}

double reference_element(const ReferenceProblem& problem, const OutputIndex& index) {
  double sum = 0;
  for (int64_t kk = 0; kk < problem.shape.k; ++kk) {
    sum += a_value(problem, index.batch, index.row, kk) * b_value(problem, index.batch, index.col, kk);
  }
  return sum;
}

std::vector<double> dequantized_row(const ReferenceProblem& problem, bool is_a, int64_t batch, int64_t row) {
  static const std::vector<double> e4m3 = [] {
    std::vector<double> table(256);
    for (int code = 0; code < 256; ++code) table[size_t(code)] = decode_e4m3(uint8_t(code));
    return table;
  }();
  const GemmShape& s = problem.shape;
  const bool fp8 = is_a ? problem.format == OperandFormat::fp8_blockscale : problem.format != OperandFormat::bf16;
  const uint64_t seed = is_a ? problem.seed_a : problem.seed_b;
  const uint64_t first = is_a ? synthetic::a_index(batch, row, 0, s.m, s.k) : synthetic::b_index(batch, row, 0, s.n, s.k);
  std::vector<double> values(size_t(s.k));
  for (int64_t k0 = 0; k0 < s.k; k0 += synthetic::kScaleBlock) {
    const int64_t k_end = std::min(s.k, k0 + synthetic::kScaleBlock);
    if (!fp8) {
      const uint64_t stream = is_a ? Stream::a_bf16 : Stream::b_bf16;
      for (int64_t kk = k0; kk < k_end; ++kk)
        values[size_t(kk)] = decode_bf16(synthetic::bf16_value(seed, stream, first + uint64_t(kk)));
      continue;
    }
    const int64_t k_block = k0 / synthetic::kScaleBlock;
    const uint64_t scale_index =
        is_a ? synthetic::a_scale_index(batch, row, k_block, s.m, s.k)
             : synthetic::b_scale_index(batch, row / synthetic::kScaleBlock, k_block, s.n, s.k);
    const double scale = synthetic::block_scale(seed, is_a ? Stream::a_scales : Stream::b_scales, scale_index);
    const uint64_t stream = is_a ? Stream::a_codes : Stream::b_codes;
    for (int64_t kk = k0; kk < k_end; ++kk)
      values[size_t(kk)] = e4m3[synthetic::fp8_code(seed, stream, first + uint64_t(kk))] * scale;
  }
  return values;
}

CheckResult compare_with_reference(const ReferenceProblem& problem, std::span<const OutputIndex> indices,
                                   std::span<const uint16_t> outputs_bf16) {
  // Sampled elements share rows and columns: dequantize each operand row once.
  const int64_t k = problem.shape.k;
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> a_rows, b_rows;
  auto cached_row = [&](auto& cache, bool is_a, int64_t batch, int64_t row) -> const std::vector<double>& {
    auto [it, inserted] = cache.try_emplace({batch, row});
    if (inserted) it->second = dequantized_row(problem, is_a, batch, row);
    return it->second;
  };

  CheckResult result;
  double diff_squares = 0, ref_squares = 0;
  const size_t count = std::min(indices.size(), outputs_bf16.size());
  for (size_t i = 0; i < count; ++i) {
    const OutputIndex& index = indices[i];
    ++result.elements_checked;
    if (outputs_bf16[i] == kPoisonBf16) {
      ++result.unwritten;
      continue;
    }
    const std::vector<double>& a = cached_row(a_rows, true, index.batch, index.row);
    const std::vector<double>& b = cached_row(b_rows, false, index.batch, index.col);
    double reference = 0;
    for (int64_t kk = 0; kk < k; ++kk) reference += a[size_t(kk)] * b[size_t(kk)];
    const double diff = double(decode_bf16(outputs_bf16[i])) - reference;
    diff_squares += diff * diff;
    ref_squares += reference * reference;
  }
  if (ref_squares > 0) {
    result.rel_err = std::sqrt(diff_squares / ref_squares);
  } else {
    result.rel_err = diff_squares == 0 ? 0 : std::numeric_limits<double>::infinity();
  }
  return result;
}

}  // namespace shapescope::kernels
