// cpu_a16w4_blockscale_grouped: the grouped W4A16 GEMM on the CPU (MoE experts in MXFP4, NVFP4 or
// e2m1_e8m0_16): each group with rows multiplies its bf16 rows by its own FP4 weights, dequantized per 128
// K columns inside the run (scaled_weight_columns). A and C sit in the problem's layout; padding rows are
// neither decoded nor computed, so the kernel needs no padding (executed rows = useful rows).
#include <fmt/format.h>

#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_grouped_gemm.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "kernels/cpu/cpu_scaled_operand.hpp"
#include "kernels/cpu/parallel_for.hpp"
#include "kernels/grouped_gemm.hpp"

namespace shapescope::kernels::cpu {

namespace {

struct GroupedFp4Weights {
  GroupedFp4Weights(const GroupedWeightShape& shape, uint64_t seed, int threads)
      : shape(shape),
        seed(seed),
        format(a16w4_operands(shape.format)),
        operand(operand_encodings(format).b, synthetic::kBStreams, seed, shape.groups, shape.n, shape.k, threads) {}

  GroupedWeightShape shape;
  uint64_t seed = 0;
  OperandFormat format;
  CpuScaledOperand operand;  // batch g = group g
};

class GroupedFp4Gemm final : public CpuGroupedPreparedGemm {
 public:
  GroupedFp4Gemm(const GroupedFp4Weights& weights, GroupedShape shape, uint64_t seed, int threads)
      : CpuGroupedPreparedGemm(weights.format, std::move(shape), seed, weights.seed, threads), weights_(weights) {
    const int64_t k = shape_.k;
    a_values_.assign(size_t(shape_.layout_rows() * k), 0);
    a_decoded_.assign(a_values_.size(), 0.0f);
    for (int64_t g = 0; g < shape_.groups(); ++g) {
      const int64_t first = shape_.first_row(g), routed = shape_.routed_row(g);
      parallel_for(threads_, shape_.rows[size_t(g)], [&](int64_t i) {
        const uint64_t logical_row = uint64_t(routed + i);  // synthetic a_index(0, row, col) = row * k + col
        for (int64_t col = 0; col < k; ++col)
          a_values_[size_t((first + i) * k + col)] =
              synthetic::bf16_value(seed_a_, synthetic::Stream::a_bf16, logical_row * uint64_t(k) + uint64_t(col));
      });
    }
  }

  // bf16 values + decoded floats + bf16 output, over the layout's rows
  static std::size_t activation_bytes(const GroupedShape& shape) {
    return std::size_t(shape.layout_rows() * (shape.k * 6 + shape.n * 2));
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
      store_group_tile(g, col0, scaled_weight_columns(a_decoded_.data() + first * k, rows, k, weights_.operand, g,
                                                      col0, width));
    });
  }

  std::string launch_name() const override {
    return fmt::format("cpu_a16w4_blockscale_grouped({}, {} of {} groups, eigen sgemm per 128 K columns, {} threads)",
                       to_string(block_format_of(format_)), active_.size(), shape_.groups(), threads_);
  }

 private:
  const GroupedFp4Weights& weights_;
  std::vector<uint16_t> a_values_;  // [layout rows][k] bf16, zeros in padding rows
  std::vector<float> a_decoded_;    // scratch, rewritten by every run
};

}  // namespace

GroupedKernelEntry cpu_a16w4_blockscale_grouped_entry() {
  GroupedKernelEntry entry = cpu_grouped_kernel_entry<GroupedFp4Weights, GroupedFp4Gemm>(
      {.name = "cpu_a16w4_blockscale_grouped", .dtype = "bf16",
       .formats = a16w4_formats_text() + " (contiguous or masked groups, B [groups])",
       .formats_taken = a16w4_formats(),
       .description = "per group with rows, cpu_a16w4_blockscale's product; padding rows skipped"},
      "cpu_a16w4_blockscale");
  entry.unsupported_reason = [](const GroupedShape& shape) { return scaled_k_problem(BlockFormatId::nvfp4, shape.k); };
  entry.describe_config = [](const GroupedShape& shape) {
    return fmt::format("{} groups with rows x {} column blocks of {}, B dequantized per 128 K columns",
                       shape.active_groups(), synthetic::blocks(shape.n, kTileN), kTileN);
  };
  return entry;
}

}  // namespace shapescope::kernels::cpu
