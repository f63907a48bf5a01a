// Grouped GEMM layouts (padding counted), the per-group reference check, and the CPU
// grouped kernel against it: empty groups, one-row groups, partial scale blocks.
#include "kernels/grouped_gemm.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "common/user_error.hpp"
#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/fp8_e4m3.hpp"
#include "kernels/grouped_reference.hpp"

namespace shapescope::kernels {
namespace {

GroupedShape contiguous(std::vector<int64_t> rows, int64_t align, int64_t n = 256, int64_t k = 256) {
  GroupedShape shape;
  shape.n = n;
  shape.k = k;
  shape.rows = std::move(rows);
  shape.align = align;
  return shape;
}

GroupedShape masked(std::vector<int64_t> rows, int64_t max_m, int64_t n = 256, int64_t k = 256) {
  GroupedShape shape = contiguous(std::move(rows), 1, n, k);
  shape.layout = GroupLayout::masked;
  shape.max_m = max_m;
  return shape;
}

TEST(GroupedShape, ContiguousPaddingIsCountedPerGroup) {
  const GroupedShape shape = contiguous({0, 1, 128, 129, 5}, 128);
  EXPECT_EQ(shape.groups(), 5);
  EXPECT_EQ(shape.active_groups(), 4);
  EXPECT_EQ(shape.useful_rows(), 263);
  EXPECT_EQ(shape.layout_rows(), 0 + 128 + 128 + 256 + 128);
  EXPECT_EQ(shape.padded_rows(), 640 - 263);
  EXPECT_EQ(shape.first_row(0), 0);
  EXPECT_EQ(shape.first_row(1), 0);  // an empty group takes no rows
  EXPECT_EQ(shape.first_row(2), 128);
  EXPECT_EQ(shape.first_row(4), 512);
  EXPECT_EQ(shape.routed_row(4), 258);
  EXPECT_EQ(shape.layout_text(), "contiguous:128");
  const GroupedShape unaligned = contiguous({0, 1, 128, 129, 5}, 1);
  EXPECT_EQ(unaligned.padded_rows(), 0);
  EXPECT_EQ(unaligned.first_row(4), unaligned.routed_row(4));
  EXPECT_EQ(contiguous({0, 1, 128, 129, 5}, 64).layout_rows(), 0 + 64 + 128 + 192 + 64);
}

TEST(GroupedShape, MaskedSlotsHoldMaxM) {
  const GroupedShape shape = masked({3, 0, 64}, 64);
  EXPECT_EQ(shape.layout_rows(), 3 * 64);
  EXPECT_EQ(shape.padded_rows(), 192 - 67);
  EXPECT_EQ(shape.first_row(2), 128);
  EXPECT_EQ(shape.layout_text(), "masked:64");
  EXPECT_FALSE(grouped_shape_problem(shape).has_value());
  EXPECT_TRUE(grouped_shape_problem(masked({3, 0, 65}, 64)).has_value());
  EXPECT_TRUE(grouped_shape_problem(contiguous({1}, 0)).has_value());
  EXPECT_TRUE(grouped_shape_problem(contiguous({}, 1)).has_value());
}

TEST(GroupedShape, LaidOutGroupsGetSlotsOfTheLargestGroupRoundedUp) {
  const GroupedShape masked = lay_out_groups(64, 128, {3, 0, 70}, GroupLayout::masked, 1, 64);
  EXPECT_EQ(masked.max_m, 128);
  EXPECT_EQ(masked.layout_rows(), 3 * 128);
  EXPECT_FALSE(grouped_shape_problem(masked).has_value());
  EXPECT_EQ(lay_out_groups(64, 128, {0, 0}, GroupLayout::masked, 1, 64).max_m, 64);  // empty groups: one slot
  EXPECT_EQ(lay_out_groups(64, 128, {0, 0}, GroupLayout::masked, 1, 1).max_m, 1);
  const GroupedShape contiguous = lay_out_groups(64, 128, {3, 0, 70}, GroupLayout::contiguous, 8, 64);
  EXPECT_EQ(contiguous.max_m, 0);
  EXPECT_EQ(contiguous.first_row(2), 8);
}

TEST(GroupedShape, MinBytesCountOnlyActiveExpertsWeights) {
  const GroupedShape one = contiguous({4, 0, 0, 0}, 1, 256, 512);
  const GroupedShape two = contiguous({2, 2, 0, 0}, 1, 256, 512);
  // Same rows, one more expert's weights (codes and 2 x 4 scales) to read.
  EXPECT_DOUBLE_EQ(grouped_min_bytes(two, OperandFormat::fp8_blockscale) - grouped_min_bytes(one, OperandFormat::fp8_blockscale), 256.0 * 512 + 2 * 4 * 4);
  EXPECT_DOUBLE_EQ(grouped_min_bytes(two, OperandFormat::bf16) - grouped_min_bytes(one, OperandFormat::bf16), 2.0 * 256 * 512);
}

TEST(GroupedReference, SamplesEveryGroupWithRowsAndNoPadding) {
  const GroupedShape shape = contiguous({0, 1, 300, 7, 0, 64}, 128, 384, 256);
  const std::vector<GroupedOutputIndex> indices = sample_grouped_output(shape, 512);
  std::set<int64_t> groups;
  for (const GroupedOutputIndex& index : indices) {
    groups.insert(index.group);
    EXPECT_LT(index.row, shape.rows[std::size_t(index.group)]);  // never a padding row
    EXPECT_LT(index.col, shape.n);
  }
  EXPECT_EQ(groups, (std::set<int64_t>{1, 2, 3, 5}));
  // Each group's corners are among them.
  for (const int64_t g : {1, 2, 3, 5}) {
    const int64_t last_row = shape.rows[std::size_t(g)] - 1;
    for (const auto& [row, col] : {std::pair<int64_t, int64_t>{0, 0}, {0, 383}, {last_row, 0}, {last_row, 383}}) {
      const bool found = std::any_of(indices.begin(), indices.end(), [&](const GroupedOutputIndex& i) {
        return i.group == g && i.row == row && i.col == col;
      });
      EXPECT_TRUE(found) << "group " << g << " row " << row << " col " << col;
    }
  }
}

std::unique_ptr<GroupedPreparedGemm> prepare_cpu(Device& device, const GroupedShape& shape, uint64_t seed) {
  const GroupedKernelEntry& entry = find_grouped_kernel("cpu_fp8_blockscale_grouped");
  static std::vector<std::unique_ptr<GroupedGemmSession>> sessions;  // the prepared GEMM borrows the weights
  sessions.push_back(entry.open(device, {shape.groups(), shape.n, shape.k}, seed));
  return sessions.back()->prepare(shape, seed + 1);
}

class CpuGroupedKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    register_cpu_kernels();
    device_ = make_cpu_device(2);
  }
  std::unique_ptr<Device> device_;
};

// bf16 output rounding alone gives ~2e-3; a wrong expert, row offset or K block gives O(1).
constexpr double kExpectedError = 5e-3;

TEST_F(CpuGroupedKernel, MatchesTheReferenceInEveryLayout) {
  // Empty groups, one-row groups, a group over a tile, N and K with partial 128 blocks.
  const std::vector<int64_t> rows = {0, 1, 130, 3, 0, 1};
  for (const GroupedShape& shape :
       {contiguous(rows, 1, 320, 272), contiguous(rows, 128, 320, 272), contiguous(rows, 64, 320, 272),
        masked(rows, 136, 320, 272)}) {
    SCOPED_TRACE(shape.layout_text());
    const auto gemm = prepare_cpu(*device_, shape, 77);
    const CheckResult result = gemm->check();
    EXPECT_EQ(result.unwritten, 0);
    EXPECT_EQ(result.elements_checked, int64_t(sample_grouped_output(shape, cpu::kCheckElements).size()));
    EXPECT_LE(result.rel_err, kExpectedError);
    EXPECT_EQ(gemm->executed_rows(), shape.useful_rows());
    EXPECT_DOUBLE_EQ(gemm->min_bytes(), grouped_min_bytes(shape, OperandFormat::fp8_blockscale));
  }
}

TEST_F(CpuGroupedKernel, AllEmptyGroupsRunAndCheckNothing) {
  const auto gemm = prepare_cpu(*device_, contiguous({0, 0, 0}, 128), 5);
  const CheckResult result = gemm->check();
  EXPECT_EQ(result.elements_checked, 0);
  EXPECT_TRUE(result.passed(1e-2));
}

// The check catches a kernel that used the neighbouring expert's weights or rows.
TEST_F(CpuGroupedKernel, TheCheckCatchesAWrongExpert) {
  const GroupedShape shape = contiguous({2, 3, 2}, 1, 128, 256);
  const ReferenceProblem problem = grouped_reference_problem(OperandFormat::fp8_blockscale, shape, 11, 12);
  std::vector<GroupedOutputIndex> indices = sample_grouped_output(shape, 64);
  std::vector<uint16_t> right, wrong;
  for (const GroupedOutputIndex& index : indices) {
    auto element = [&](int64_t group) {
      const std::vector<double> a = dequantized_row(problem, true, 0, shape.routed_row(index.group) + index.row);
      const std::vector<double> b = dequantized_row(problem, false, group, index.col);
      double sum = 0;
      for (int64_t kk = 0; kk < shape.k; ++kk) sum += a[std::size_t(kk)] * b[std::size_t(kk)];
      return encode_bf16(float(sum));
    };
    right.push_back(element(index.group));
    wrong.push_back(element((index.group + 1) % shape.groups()));
  }
  EXPECT_LE(compare_grouped_with_reference(OperandFormat::fp8_blockscale, shape, 11, 12, indices, right).rel_err,
            kExpectedError);
  EXPECT_GT(compare_grouped_with_reference(OperandFormat::fp8_blockscale, shape, 11, 12, indices, wrong).rel_err, 0.5);
}

TEST(GroupedRegistry, UnknownNamesListTheGroupedKernels) {
  register_cpu_kernels();
  try {
    find_grouped_kernel("cpu_fp8_blockscale");
    FAIL() << "a dense kernel is not a grouped one";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("cpu_fp8_blockscale_grouped"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace shapescope::kernels
