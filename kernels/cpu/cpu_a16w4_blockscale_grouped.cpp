// cpu_a16w4_blockscale_grouped: the grouped W4A16 GEMM on the CPU (MoE experts in MXFP4, NVFP4 or
// e2m1_e8m0_16): each group with rows multiplies its bf16 rows by its own FP4 weights, dequantized per 128
// K columns inside the run (scaled_weight_columns). A and C sit in the problem's layout; padding rows are
// neither decoded nor computed, so the kernel needs no padding (executed rows = useful rows).
#include <fmt/format.h>

#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/cpu_scaled_operand.hpp"
#include "kernels/cpu/parallel_for.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/grouped_reference.hpp"

namespace shapescope::kernels::cpu {

namespace {

struct GroupedFp4Weights {
  GroupedWeightShape shape;
  uint64_t seed = 0;
  OperandFormat format;
  CpuScaledOperand operand;  // batch g = group g
};

class GroupedFp4Gemm final : public GroupedPreparedGemm {
 public:
  GroupedFp4Gemm(const GroupedFp4Weights& weights, GroupedShape shape, uint64_t seed, int threads)
      : weights_(weights), shape_(std::move(shape)), seed_(seed), threads_(threads) {
    const int64_t k = shape_.k, layout_rows = shape_.layout_rows();
    a_values_.assign(size_t(layout_rows * k), 0);
    a_decoded_.assign(a_values_.size(), 0.0f);
    output_.assign(size_t(layout_rows * shape_.n), kPoisonBf16);
    for (int64_t g = 0; g < shape_.groups(); ++g) {
      const int64_t first = shape_.first_row(g), routed = shape_.routed_row(g);
      parallel_for(threads_, shape_.rows[size_t(g)], [&](int64_t i) {
        const uint64_t logical_row = uint64_t(routed + i);  // synthetic a_index(0, row, col) = row * k + col
        for (int64_t col = 0; col < k; ++col)
          a_values_[size_t((first + i) * k + col)] =
              synthetic::bf16_value(seed_, synthetic::Stream::a_bf16, logical_row * uint64_t(k) + uint64_t(col));
      });
      if (shape_.rows[size_t(g)] > 0) active_.push_back(g);
    }
  }

  void run() override {
    const int64_t n = shape_.n, k = shape_.k, n_tiles = synthetic::blocks(n, kTileN);
    for (const int64_t g : active_) {
      const int64_t first = shape_.first_row(g);
      parallel_for(threads_, shape_.rows[size_t(g)], [&](int64_t i) {
        for (int64_t col = (first + i) * k; col < (first + i + 1) * k; ++col)
          a_decoded_[size_t(col)] = decode_bf16(a_values_[size_t(col)]);
      });
    }
    parallel_for(threads_, int64_t(active_.size()) * n_tiles, [&](int64_t task) {
      const int64_t g = active_[size_t(task / n_tiles)], col0 = (task % n_tiles) * kTileN;
      const int64_t first = shape_.first_row(g), rows = shape_.rows[size_t(g)], width = std::min(kTileN, n - col0);
      const RowMajorMatrix tile =
          scaled_weight_columns(a_decoded_.data() + first * k, rows, k, weights_.operand, g, col0, width);
      for (int64_t row = 0; row < rows; ++row)
        for (int64_t col = 0; col < width; ++col)
          output_[size_t((first + row) * n + col0 + col)] = encode_bf16(tile(row, col));
    });
  }

  CheckResult check() override {
    std::fill(output_.begin(), output_.end(), kPoisonBf16);
    run();
    const std::vector<GroupedOutputIndex> indices = sample_grouped_output(shape_, kCheckElements);
    std::vector<uint16_t> sampled;
    sampled.reserve(indices.size());
    for (const GroupedOutputIndex& index : indices)
      sampled.push_back(output_[size_t(layout_row(shape_, index) * shape_.n + index.col)]);
    return compare_grouped_with_reference(weights_.format, shape_, seed_, weights_.seed, indices, sampled);
  }

  std::string launch_name() const override {
    return fmt::format("cpu_a16w4_blockscale_grouped({}, {} of {} groups, eigen sgemm per 128 K columns, {} threads)",
                       to_string(block_format_of(weights_.format)), active_.size(), shape_.groups(), threads_);
  }
  double min_bytes() const override { return grouped_min_bytes(shape_, weights_.format); }
  int64_t executed_rows() const override { return shape_.useful_rows(); }  // padding rows are skipped

 private:
  const GroupedFp4Weights& weights_;
  GroupedShape shape_;
  uint64_t seed_;
  int threads_;
  std::vector<int64_t> active_;     // groups with rows
  std::vector<uint16_t> a_values_;  // [layout rows][k] bf16, zeros in padding rows
  std::vector<float> a_decoded_;    // scratch, rewritten by every run
  std::vector<uint16_t> output_;    // [layout rows][n] bf16
};

class GroupedFp4Session final : public GroupedGemmSession {
 public:
  GroupedFp4Session(const GroupedWeightShape& shape, uint64_t seed, int threads)
      : threads_(threads),
        weights_{shape, seed, a16w4_operands(shape.format),
                 CpuScaledOperand(operand_encodings(a16w4_operands(shape.format)).b, synthetic::kBStreams, seed,
                                  shape.groups, shape.n, shape.k, threads)} {}

  std::size_t activation_bytes(const GroupedShape& shape) const override {
    // bf16 values + decoded floats + bf16 output, over the layout's rows
    return std::size_t(shape.layout_rows() * (shape.k * 6 + shape.n * 2));
  }

  std::unique_ptr<GroupedPreparedGemm> prepare(const GroupedShape& shape, uint64_t seed) override {
    if (shape.groups() != weights_.shape.groups || shape.n != weights_.shape.n || shape.k != weights_.shape.k)
      throw std::logic_error("cpu_a16w4_blockscale_grouped: the shape does not match the session's weights");
    return std::make_unique<GroupedFp4Gemm>(weights_, shape, seed, threads_);
  }

 private:
  int threads_;
  GroupedFp4Weights weights_;
};

}  // namespace

GroupedKernelEntry cpu_a16w4_blockscale_grouped_entry() {
  GroupedKernelEntry entry;
  entry.name = "cpu_a16w4_blockscale_grouped";
  entry.backend = BackendKind::cpu;
  entry.dtype = "bf16";
  entry.formats_taken = a16w4_formats();
  entry.formats = a16w4_formats_text() + " (contiguous or masked groups, B [groups])";
  entry.description = "per group with rows, cpu_a16w4_blockscale's product; padding rows skipped";
  entry.peak_kernel = "cpu_a16w4_blockscale";
  entry.unsupported_reason = [](const GroupedShape& shape) { return scaled_k_problem(BlockFormatId::nvfp4, shape.k); };
  entry.describe_config = [](const GroupedShape& shape) {
    return fmt::format("{} groups with rows x {} column blocks of {}, B dequantized per 128 K columns",
                       shape.active_groups(), synthetic::blocks(shape.n, kTileN), kTileN);
  };
  entry.open = [](Device& device, const GroupedWeightShape& shape, uint64_t seed) -> std::unique_ptr<GroupedGemmSession> {
    return std::make_unique<GroupedFp4Session>(shape, seed, device.info().multiprocessors);
  };
  return entry;
}

}  // namespace shapescope::kernels::cpu
