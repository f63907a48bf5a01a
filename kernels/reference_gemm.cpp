// Float64 reference on the dequantized synthetic operands.
#include "kernels/reference_gemm.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/host_threads.hpp"
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

// `count` distinct columns of [0, extent): 0 and extent - 1, then a golden-ratio (Weyl) sequence, which lands
// on every offset inside 128-wide blocks. Nested: a smaller count is a prefix of a larger one, so the columns
// (the weights' rows the reference reads) a sweep checks stay the same at every M and their decoded rows are
// reused (weight_rows below). Sorted.
std::vector<int64_t> nested_columns(int64_t extent, int64_t count) {
  count = std::clamp<int64_t>(count, std::min<int64_t>(extent, 2), extent);
  std::vector<int64_t> columns;
  if (count == extent) {
    for (int64_t col = 0; col < extent; ++col) columns.push_back(col);
    return columns;
  }
  constexpr double kGolden = 0.6180339887498949;  // (sqrt(5) - 1) / 2
  std::vector<bool> taken(size_t(extent), false);
  auto take = [&](int64_t col) {
    if (taken[size_t(col)]) return;
    taken[size_t(col)] = true;
    columns.push_back(col);
  };
  take(0);
  take(extent - 1);
  for (int64_t i = 1; int64_t(columns.size()) < count; ++i) {
    const double fraction = double(i) * kGolden - std::floor(double(i) * kGolden);
    take(std::min(extent - 1, int64_t(fraction * double(extent))));
  }
  std::sort(columns.begin(), columns.end());
  return columns;
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
  const std::vector<int64_t> cols = nested_columns(shape.n, col_count);
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

namespace {

// Columns [k_begin, k_end) of dequantized_row into `values` (indexed by column), so the check decodes its rows
// into one buffer, a scale block at a time on several threads. k_begin is a multiple of the scale block.
void dequantize_row_into(const ReferenceProblem& problem, bool is_a, int64_t batch, int64_t row, double* values,
                         int64_t k_begin, int64_t k_end) {
  static const std::vector<double> e4m3 = [] {
    std::vector<double> table(256);
    for (int code = 0; code < 256; ++code) table[size_t(code)] = decode_e4m3(uint8_t(code));
    return table;
  }();
  const GemmShape& s = problem.shape;
  const bool fp8 = is_a ? problem.format == OperandFormat::fp8_blockscale : problem.format != OperandFormat::bf16;
  const uint64_t seed = is_a ? problem.seed_a : problem.seed_b;
  const uint64_t first = is_a ? synthetic::a_index(batch, row, 0, s.m, s.k) : synthetic::b_index(batch, row, 0, s.n, s.k);
  for (int64_t k0 = k_begin; k0 < k_end; k0 += synthetic::kScaleBlock) {
    const int64_t block_end = std::min(k_end, k0 + synthetic::kScaleBlock);
    if (!fp8) {
      const uint64_t stream = is_a ? Stream::a_bf16 : Stream::b_bf16;
      for (int64_t kk = k0; kk < block_end; ++kk)
        values[size_t(kk)] = decode_bf16(synthetic::bf16_value(seed, stream, first + uint64_t(kk)));
      continue;
    }
    const int64_t k_block = k0 / synthetic::kScaleBlock;
    const uint64_t scale_index =
        is_a ? synthetic::a_scale_index(batch, row, k_block, s.m, s.k)
             : synthetic::b_scale_index(batch, row / synthetic::kScaleBlock, k_block, s.n, s.k);
    const double scale = synthetic::block_scale(seed, is_a ? Stream::a_scales : Stream::b_scales, scale_index);
    const uint64_t stream = is_a ? Stream::a_codes : Stream::b_codes;
    for (int64_t kk = k0; kk < block_end; ++kk)
      values[size_t(kk)] = e4m3[synthetic::fp8_code(seed, stream, first + uint64_t(kk))] * scale;
  }
}

}  // namespace

std::vector<double> dequantized_row(const ReferenceProblem& problem, bool is_a, int64_t batch, int64_t row) {
  std::vector<double> values(size_t(problem.shape.k));
  dequantize_row_into(problem, is_a, batch, row, values.data(), 0, problem.shape.k);
  return values;
}

namespace {

// The dequantized weight rows of the last weights checked, kept across checks: a sweep checks every M against
// the same weights, and decoding a K-long row costs K hashes (on a one-row M, 512 rows of 4096 were most of a
// point's time). Held by shared_ptr so a row stays valid while another thread replaces the set; bounded.
class WeightRows {
 public:
  using Key = std::pair<int64_t, int64_t>;  // (batch, column)
  using Row = std::shared_ptr<const std::vector<double>>;
  // Keeps `rows`' keys, fills in their rows: the kept ones under one lock, the others decoded on the check's
  // threads (a file's first check decodes them all, 512 rows of K=7168 for a one-row M; each is K hashes).
  void fill(const ReferenceProblem& problem, std::map<Key, Row>& rows) {
    const Identity identity{problem.format, problem.seed_b, problem.shape.n, problem.shape.k,
                            problem.shape.batch_count};
    std::vector<std::pair<const Key, Row>*> missing;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (identity != identity_ || bytes_ > kMaxBytes) {
        rows_.clear();
        bytes_ = 0;
        identity_ = identity;
      }
      for (auto& entry : rows) {
        const auto found = rows_.find(entry.first);
        if (found != rows_.end()) {
          entry.second = found->second;
        } else {
          missing.push_back(&entry);
        }
      }
    }
    HostThreads::shared().run_blocks(
        missing.size(),
        [&](size_t begin, size_t end) {
          for (size_t i = begin; i < end; ++i)
            missing[i]->second = std::make_shared<const std::vector<double>>(
                dequantized_row(problem, false, missing[i]->first.first, missing[i]->first.second));
        },
        2);
    const std::lock_guard<std::mutex> lock(mutex_);
    if (identity != identity_) return;
    for (const auto* entry : missing) {
      rows_.emplace(entry->first, entry->second);
      bytes_ += entry->second->size() * sizeof(double);
    }
  }

 private:
  static constexpr std::size_t kMaxBytes = std::size_t(256) << 20;
  using Identity = std::tuple<OperandFormat, uint64_t, int64_t, int64_t, int64_t>;
  std::mutex mutex_;
  Identity identity_{};
  std::map<Key, Row> rows_;
  std::size_t bytes_ = 0;
};

WeightRows& weight_rows() {
  static WeightRows rows;
  return rows;
}

// Eight partial sums: independent chains the compiler vectorizes (one chain waits on every add). The order
// differs from a running sum by rounding at the 1e-16 level, far below any check threshold.
double dot(const double* a, const double* b, int64_t k) {
  constexpr int kLanes = 8;
  std::array<double, kLanes> partial{};
  int64_t kk = 0;
  for (; kk + kLanes <= k; kk += kLanes)
    for (int lane = 0; lane < kLanes; ++lane) partial[size_t(lane)] += a[kk + lane] * b[kk + lane];
  double sum = 0;
  for (; kk < k; ++kk) sum += a[kk] * b[kk];
  for (double value : partial) sum += value;
  return sum;
}

}  // namespace

// Runs work(begin, end) over [0, count) in blocks on the check's host threads. The check's float64 sums took
// 2.9 ms of a point's 4.9 ms median overhead on one thread of the H100's host (llama3_8b gate_up TP2, K=4096).
// Fewer than `min_items` items run on the calling thread: below that a block costs more than it saves.
template <class Work>
void in_parallel_blocks(size_t count, const Work& work, size_t min_items = 64) {
  HostThreads::shared().run_blocks(count, work, min_items);
}

double relative_error(double diff_squares, double ref_squares) {
  if (ref_squares > 0) return std::sqrt(diff_squares / ref_squares);
  return diff_squares == 0 ? 0 : std::numeric_limits<double>::infinity();
}

CheckResult compare_with_reference(const ReferenceProblem& problem, std::span<const OutputIndex> indices,
                                   std::span<const uint16_t> outputs_bf16) {
  // Sampled elements share rows and columns: dequantize each activation row once per check (into one buffer:
  // a buffer per row cost as much again in allocation and page faults), each weight row once per weight set.
  const int64_t k = problem.shape.k;
  const size_t count = std::min(indices.size(), outputs_bf16.size());
  std::map<std::pair<int64_t, int64_t>, size_t> a_slot;
  for (size_t i = 0; i < count; ++i)
    if (outputs_bf16[i] != kPoisonBf16) a_slot.try_emplace({indices[i].batch, indices[i].row}, a_slot.size());
  std::vector<double> a_values(a_slot.size() * size_t(k));
  const std::vector<std::pair<std::pair<int64_t, int64_t>, size_t>> a_rows(a_slot.begin(), a_slot.end());
  // Work items are (row, scale block): a tall-and-narrow sample has few rows (24 of K=4096 took 1.3 ms on one
  // thread, the longest part of the check), and every item costs the same.
  const size_t blocks_per_row = size_t(synthetic::blocks(k));
  in_parallel_blocks(a_rows.size() * blocks_per_row, [&](size_t begin, size_t end) {
    for (size_t item = begin; item < end; ++item) {
      const auto& [row, slot] = a_rows[item / blocks_per_row];
      const int64_t k0 = int64_t(item % blocks_per_row) * synthetic::kScaleBlock;
      dequantize_row_into(problem, true, row.first, row.second, a_values.data() + slot * size_t(k), k0,
                          std::min(k, k0 + synthetic::kScaleBlock));
    }
  });
  std::map<WeightRows::Key, WeightRows::Row> b_rows;
  for (size_t i = 0; i < count; ++i)
    if (outputs_bf16[i] != kPoisonBf16) b_rows.try_emplace({indices[i].batch, indices[i].col});
  weight_rows().fill(problem, b_rows);

  CheckResult result;
  std::vector<const double*> a_of(count, nullptr), b_of(count, nullptr);  // null: unwritten
  for (size_t i = 0; i < count; ++i) {
    const OutputIndex& index = indices[i];
    ++result.elements_checked;
    if (outputs_bf16[i] == kPoisonBf16) {
      ++result.unwritten;
      continue;
    }
    a_of[i] = a_values.data() + a_slot.at({index.batch, index.row}) * size_t(k);
    b_of[i] = b_rows.at({index.batch, index.col})->data();
  }
  // K in chunks, so a chunk of every sampled row stays in cache while the elements sharing it are summed.
  constexpr int64_t kChunk = 256;
  std::vector<double> references(count, 0.0);
  in_parallel_blocks(count, [&](size_t begin, size_t end) {
    for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
      const int64_t length = std::min(kChunk, k - k0);
      for (size_t i = begin; i < end; ++i)
        if (a_of[i]) references[i] += dot(a_of[i] + k0, b_of[i] + k0, length);
    }
  });
  double diff_squares = 0, ref_squares = 0;
  for (size_t i = 0; i < count; ++i) {
    if (!a_of[i]) continue;
    const double diff = double(decode_bf16(outputs_bf16[i])) - references[i];
    diff_squares += diff * diff;
    ref_squares += references[i] * references[i];
  }
  result.rel_err = relative_error(diff_squares, ref_squares);
  return result;
}

}  // namespace shapescope::kernels
