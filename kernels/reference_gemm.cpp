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

namespace {

// An operand's encoding, streams, seed and row count in one place.
struct OperandOf {
  OperandEncoding encoding;
  synthetic::OperandStreams streams;
  uint64_t seed;
  int64_t rows;
};

OperandOf operand_of(const ReferenceProblem& problem, bool is_a) {
  const OperandEncodings encodings = operand_encodings(problem.format);
  if (is_a) return {encodings.a, synthetic::kAStreams, problem.seed_a, problem.shape.m};
  return {encodings.b, synthetic::kBStreams, problem.seed_b, problem.shape.n};
}

double operand_value(const ReferenceProblem& problem, bool is_a, int64_t batch, int64_t row, int64_t col) {
  const OperandOf op = operand_of(problem, is_a);
  const int64_t k = problem.shape.k;
  const uint64_t index = uint64_t((batch * op.rows + row) * k + col);
  const double element =
      synthetic::decode_element(op.encoding.element, synthetic::element_code(op.encoding, op.streams, op.seed, index));
  if (!op.encoding.scaled()) return element;
  const uint64_t scale_index = synthetic::scale_index(op.encoding, batch, row, col, op.rows, k);
  return element * double(synthetic::block_scale_value(op.encoding, op.streams, op.seed, scale_index)) *
         double(synthetic::tensor_scale_value(op.encoding, op.streams, op.seed, batch));
}

}  // namespace

double a_value(const ReferenceProblem& problem, int64_t batch, int64_t row, int64_t col) {
  return operand_value(problem, true, batch, row, col);
}

double b_value(const ReferenceProblem& problem, int64_t batch, int64_t row, int64_t col) {
  return operand_value(problem, false, batch, row, col);
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
// into one buffer, a piece at a time on several threads. Codes of 8 bits or fewer go through a decode table;
// each block scale is decoded once.
void dequantize_row_into(const ReferenceProblem& problem, bool is_a, int64_t batch, int64_t row, double* values,
                         int64_t k_begin, int64_t k_end) {
  static const auto tables = [] {
    std::array<std::array<double, 256>, 4> table{};
    for (const ElementType element : {ElementType::e4m3, ElementType::e5m2, ElementType::e2m1})
      for (int code = 0; code < (element == ElementType::e2m1 ? 16 : 256); ++code)
        table[size_t(element)][size_t(code)] = synthetic::decode_element(element, uint16_t(code));
    return table;
  }();
  const OperandOf op = operand_of(problem, is_a);
  const int64_t k = problem.shape.k;
  const uint64_t first = uint64_t((batch * op.rows + row) * k);
  if (!op.encoding.scaled()) {
    for (int64_t kk = k_begin; kk < k_end; ++kk)
      values[size_t(kk)] = synthetic::decode_element(
          op.encoding.element, synthetic::element_code(op.encoding, op.streams, op.seed, first + uint64_t(kk)));
    return;
  }
  const auto& table = tables[size_t(op.encoding.element)];
  const double tensor_scale = synthetic::tensor_scale_value(op.encoding, op.streams, op.seed, batch);
  for (int64_t k0 = k_begin; k0 < k_end;) {
    const int64_t block_end = std::min(k_end, (k0 / op.encoding.block_k + 1) * op.encoding.block_k);
    const double scale =
        double(synthetic::block_scale_value(op.encoding, op.streams, op.seed,
                                            synthetic::scale_index(op.encoding, batch, row, k0, op.rows, k))) *
        tensor_scale;
    for (int64_t kk = k0; kk < block_end; ++kk)
      values[size_t(kk)] = table[synthetic::element_code(op.encoding, op.streams, op.seed, first + uint64_t(kk))] * scale;
    k0 = block_end;
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
