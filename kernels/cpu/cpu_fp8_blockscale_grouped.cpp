// cpu_fp8_blockscale_grouped: the grouped block-scaled FP8 GEMM on the CPU, so the whole
// grouped path (routing, layouts, the per-group check, CSV and sidecar) runs without a GPU.
// Each group with rows runs cpu_fp8_blockscale's product on its own rows and weights; A and
// C sit in the problem's layout (contiguous with padding between groups, or masked slots),
// padding rows are neither decoded nor computed. Tasks are (group, 128-column block) pairs.
#include "kernels/cpu/cpu_kernels.hpp"

#include <fmt/format.h>

#include "kernels/cpu/cpu_fp8_columns.hpp"
#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/cpu/cpu_grouped_gemm.hpp"
#include "kernels/cpu/parallel_for.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cpu {

namespace {

using synthetic::blocks;
using synthetic::kScaleBlock;
using synthetic::Stream;

using GroupedFp8Weights = DecodedFp8Weights<GroupedWeightShape>;  // batch g = group g

class GroupedFp8Gemm final : public CpuGroupedPreparedGemm {
 public:
  GroupedFp8Gemm(const GroupedFp8Weights& weights, GroupedShape shape, uint64_t seed, int threads)
      : CpuGroupedPreparedGemm(OperandFormat::fp8_blockscale, std::move(shape), seed, weights.seed, threads),
        weights_(weights) {
    const int64_t k = shape_.k, k_blocks = blocks(k), layout_rows = shape_.layout_rows();
    a_codes_.assign(std::size_t(layout_rows * k), 0);
    a_scales_.assign(std::size_t(layout_rows * k_blocks), 0.0f);
    a_decoded_.assign(a_codes_.size(), 0.0f);
    for (int64_t g = 0; g < shape_.groups(); ++g) {
      const int64_t first = shape_.first_row(g), routed = shape_.routed_row(g);
      parallel_for(threads_, shape_.rows[std::size_t(g)], [&](int64_t i) {
        const uint64_t logical_row = uint64_t(routed + i);  // synthetic a_index(0, row, col) = row * k + col
        for (int64_t col = 0; col < k; ++col)
          a_codes_[std::size_t((first + i) * k + col)] =
              synthetic::fp8_code(seed_a_, Stream::a_codes, logical_row * uint64_t(k) + uint64_t(col));
        for (int64_t kb = 0; kb < k_blocks; ++kb)
          a_scales_[std::size_t((first + i) * k_blocks + kb)] =
              synthetic::block_scale(seed_a_, Stream::a_scales, logical_row * uint64_t(k_blocks) + uint64_t(kb));
      });
    }
  }

  // codes + decoded floats + scales + bf16 output, over the layout's rows
  static std::size_t activation_bytes(const GroupedShape& shape) {
    return std::size_t(shape.layout_rows() * (shape.k * 5 + blocks(shape.k) * 4 + shape.n * 2));
  }

  void run() override {
    const auto& table = e4m3_table();
    const int64_t n = shape_.n, k = shape_.k, k_blocks = blocks(k), n_blocks = blocks(n);
    for (const int64_t g : active_) {
      const int64_t first = shape_.first_row(g);
      parallel_for(threads_, shape_.rows[std::size_t(g)], [&](int64_t i) {
        for (int64_t col = (first + i) * k; col < (first + i + 1) * k; ++col)
          a_decoded_[std::size_t(col)] = table[a_codes_[std::size_t(col)]];
      });
    }
    parallel_for(threads_, int64_t(active_.size()) * n_blocks, [&](int64_t task) {
      const int64_t g = active_[std::size_t(task / n_blocks)], n_block = task % n_blocks;
      const int64_t first = shape_.first_row(g), rows = shape_.rows[std::size_t(g)];
      const int64_t col0 = n_block * kScaleBlock, width = std::min(kScaleBlock, n - col0);
      store_group_tile(g, col0,
                       fp8_blockscale_columns({a_decoded_.data() + first * k, a_scales_.data() + first * k_blocks,
                                               weights_.decoded.data() + (g * n + col0) * k,
                                               weights_.scales.data() + (g * n_blocks + n_block) * k_blocks, rows,
                                               width, k}));
    });
  }

  std::string launch_name() const override {
    return fmt::format("cpu_fp8_blockscale_grouped({} of {} groups, eigen sgemm per K128 block, {} threads)",
                       active_.size(), shape_.groups(), threads_);
  }

 private:
  const GroupedFp8Weights& weights_;
  std::vector<uint8_t> a_codes_;  // [layout rows][k], zeros in padding rows
  std::vector<float> a_scales_;   // [layout rows][ceil(k/128)]
  std::vector<float> a_decoded_;  // scratch, rewritten by every run
};

}  // namespace

GroupedKernelEntry cpu_fp8_blockscale_grouped_entry() {
  GroupedKernelEntry entry = cpu_grouped_kernel_entry<GroupedFp8Weights, GroupedFp8Gemm>(
      {.name = "cpu_fp8_blockscale_grouped", .dtype = "fp8",
       .formats = "A e4m3 1x128 f32 scales (contiguous or masked groups), B [groups] e4m3 128x128 f32 scales, C bf16",
       .formats_taken = {BlockFormatId::fp8_blockscale},
       .description = "per group with rows, cpu_fp8_blockscale's Eigen product; padding rows skipped"},
      "cpu_fp8_blockscale");
  entry.describe_config = [](const GroupedShape& shape) {
    return fmt::format("{} groups with rows x {} column blocks of 128, {} K blocks", shape.active_groups(),
                       blocks(shape.n), blocks(shape.k));
  };
  return entry;
}

}  // namespace shapescope::kernels::cpu
