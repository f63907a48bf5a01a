#include "kernels/cpu/cpu_gemm.hpp"

#include <algorithm>

#include "common/interrupt.hpp"
#include "kernels/cpu/parallel_for.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cpu {

const std::array<float, 256>& e4m3_table() {
  static const std::array<float, 256> table = decode_table<256>(decode_e4m3);
  return table;
}

std::vector<uint8_t> fp8_codes(uint64_t seed, uint64_t stream, int64_t batch_count, int64_t rows, int64_t k,
                               int threads) {
  std::vector<uint8_t> codes(size_t(batch_count * rows * k));
  parallel_for(threads, batch_count * rows, [&](int64_t row) {
    const int64_t first = row * k;  // == synthetic a_index / b_index of (batch, row, 0)
    for (int64_t col = 0; col < k; ++col)
      codes[size_t(first + col)] = synthetic::fp8_code(seed, stream, uint64_t(first + col));
  });
  return codes;
}

std::vector<uint16_t> bf16_values(uint64_t seed, uint64_t stream, int64_t batch_count, int64_t rows, int64_t k,
                                  int threads) {
  std::vector<uint16_t> values(size_t(batch_count * rows * k));
  parallel_for(threads, batch_count * rows, [&](int64_t row) {
    const int64_t first = row * k;
    for (int64_t col = 0; col < k; ++col)
      values[size_t(first + col)] = synthetic::bf16_value(seed, stream, uint64_t(first + col));
  });
  return values;
}

std::vector<float> block_scales(uint64_t seed, uint64_t stream, int64_t count) {
  std::vector<float> scales(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) scales[size_t(i)] = synthetic::block_scale(seed, stream, uint64_t(i));
  return scales;
}

std::vector<float> decode_all(const std::vector<uint16_t>& bf16, int threads) {
  std::vector<float> values(bf16.size());
  constexpr int64_t kChunk = 1 << 16;
  const int64_t total = int64_t(bf16.size());
  parallel_for(threads, (total + kChunk - 1) / kChunk, [&](int64_t chunk) {
    const int64_t end = std::min(total, (chunk + 1) * kChunk);
    for (int64_t i = chunk * kChunk; i < end; ++i) values[size_t(i)] = decode_bf16(bf16[size_t(i)]);
  });
  return values;
}

std::vector<float> decode_fp8_all(const std::vector<uint8_t>& codes, int threads) {
  std::vector<float> values(codes.size());
  const auto& table = e4m3_table();
  const int64_t total = int64_t(codes.size());
  constexpr int64_t kChunk = 1 << 16;
  parallel_for(threads, (total + kChunk - 1) / kChunk, [&](int64_t chunk) {
    const int64_t end = std::min(total, (chunk + 1) * kChunk);
    for (int64_t i = chunk * kChunk; i < end; ++i) values[size_t(i)] = table[codes[size_t(i)]];
  });
  return values;
}

CpuPreparedGemm::CpuPreparedGemm(ReferenceProblem problem, int threads, std::string launch_name)
    : problem_(problem),
      threads_(threads),
      launch_name_(std::move(launch_name)),
      output_(size_t(problem.shape.batch_count * problem.shape.m * problem.shape.n), kPoisonBf16) {}

void CpuPreparedGemm::compute_output_tiles(
    const std::function<RowMajorMatrix(int64_t batch, int64_t row0, int64_t rows, int64_t col0, int64_t width)>&
        tile) {
  const int64_t m = shape().m, n = shape().n, n_tiles = synthetic::blocks(n, kTileN);
  parallel_for(threads_, shape().batch_count * n_tiles, [&](int64_t task) {
    const int64_t batch = task / n_tiles, col0 = (task % n_tiles) * kTileN;
    uint16_t* out = output_batch(batch);
    for (int64_t row0 = 0; row0 < m && !(row0 > 0 && interrupt_requested()); row0 += kRowPanel) {
      const RowMajorMatrix result = tile(batch, row0, std::min(kRowPanel, m - row0), col0, std::min(kTileN, n - col0));
      for (int64_t row = 0; row < result.rows(); ++row)
        for (int64_t col = 0; col < result.cols(); ++col)
          out[(row0 + row) * n + col0 + col] = encode_bf16(result(row, col));
    }
  });
}

CheckResult CpuPreparedGemm::check() {
  std::fill(output_.begin(), output_.end(), kPoisonBf16);
  run();
  const std::vector<OutputIndex> indices = sample_output(shape(), kCheckElements);
  std::vector<uint16_t> sampled;
  sampled.reserve(indices.size());
  for (const OutputIndex& index : indices)
    sampled.push_back(output_[size_t((index.batch * shape().m + index.row) * shape().n + index.col)]);
  return compare_with_reference(problem_, indices, sampled);
}

double CpuPreparedGemm::min_bytes() const { return gemm_min_bytes(problem_.format, shape()); }

CpuBf16ActivationGemm::CpuBf16ActivationGemm(ReferenceProblem problem, int threads, std::string launch_name)
    : CpuPreparedGemm(problem, threads, std::move(launch_name)),
      a_values_(bf16_values(problem.seed_a, synthetic::Stream::a_bf16, problem.shape.batch_count, problem.shape.m,
                            problem.shape.k, threads)),
      a_decoded_(a_values_.size()) {}

std::size_t CpuBf16ActivationGemm::activation_bytes(const WeightShape& s, int64_t m) {
  return std::size_t(s.batch_count * (m * s.k * 6 + m * s.n * 2));
}

void CpuBf16ActivationGemm::widen_activations() {
  const int64_t k = shape().k;
  parallel_for(threads_, shape().batch_count * shape().m, [&](int64_t row) {
    for (int64_t i = row * k; i < (row + 1) * k; ++i) a_decoded_[size_t(i)] = decode_bf16(a_values_[size_t(i)]);
  });
}

KernelEntry cpu_entry(KernelIdentity identity) {
  KernelEntry entry(std::move(identity));
  entry.backend = BackendKind::cpu;
  entry.batched = true;
  entry.config_for = [](const GemmShape& shape) { return KernelConfig::plain_tile(int(shape.m), int(kTileN)); };
  return entry;
}

}  // namespace shapescope::kernels::cpu
