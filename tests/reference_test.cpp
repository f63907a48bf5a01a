#include <gtest/gtest.h>

#include <limits>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <tuple>

#include "kernels/reference_gemm.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels {
namespace {

using synthetic::Stream;

TEST(SampleOutput, SmallOutputsAreCheckedWhole) {
  const GemmShape shape{3, 5, 7, 2};
  const auto indices = sample_output(shape, 1000);
  ASSERT_EQ(indices.size(), 30u);
  std::set<std::tuple<int64_t, int64_t, int64_t>> unique;
  for (const auto& i : indices) unique.insert({i.batch, i.row, i.col});
  EXPECT_EQ(unique.size(), 30u);
}

TEST(SampleOutput, LargeOutputsGetABoundedDeterministicSpreadWithEdges) {
  const GemmShape shape{1000, 14336, 4096, 3};
  const auto indices = sample_output(shape, 4096);
  EXPECT_LE(indices.size(), 4096u);
  EXPECT_GE(indices.size(), 1000u);
  for (int64_t batch = 0; batch < 3; ++batch) {
    auto has = [&](int64_t row, int64_t col) {
      return std::any_of(indices.begin(), indices.end(),
                         [&](const OutputIndex& i) { return i.batch == batch && i.row == row && i.col == col; });
    };
    EXPECT_TRUE(has(0, 0));
    EXPECT_TRUE(has(0, shape.n - 1));
    EXPECT_TRUE(has(shape.m - 1, 0));
    EXPECT_TRUE(has(shape.m - 1, shape.n - 1));
  }
  const auto again = sample_output(shape, 4096);
  ASSERT_EQ(again.size(), indices.size());
  for (size_t i = 0; i < indices.size(); ++i) EXPECT_EQ(again[i].col, indices[i].col);
}

TEST(SampleOutput, OneRowOutputsBoundTheColumnsTheReferenceMustDequantize) {
  const GemmShape shape{1, 14336, 4096, 1};
  const auto indices = sample_output(shape, 4096);
  std::set<int64_t> cols;
  for (const auto& i : indices) cols.insert(i.col);
  EXPECT_LE(cols.size(), 1024u);
  EXPECT_GE(cols.size(), 512u);
  EXPECT_TRUE(cols.count(0) && cols.count(shape.n - 1));
}

TEST(SampleOutput, TheCheckedColumnsAreNestedAcrossMSoTheWeightRowsAreDecodedOnce) {
  // The weights' rows a check reads are its sampled columns: at every M of a sweep they are the first ones of
  // one sequence, so a larger M (more rows, fewer columns) needs no weight row a smaller M did not.
  auto columns = [](int64_t m) {
    std::set<int64_t> cols;
    for (const auto& i : sample_output(GemmShape{m, 14336, 4096, 1}, 2048)) cols.insert(i.col);
    return cols;
  };
  const std::set<int64_t> widest = columns(16);
  EXPECT_GE(widest.size(), 500u);
  for (const int64_t m : {64, 448, 1024, 4096, 8192}) {
    const std::set<int64_t> cols = columns(m);
    EXPECT_TRUE(std::includes(widest.begin(), widest.end(), cols.begin(), cols.end())) << "M=" << m;
    EXPECT_TRUE(cols.count(0) && cols.count(14335)) << "M=" << m;
  }
  // Spread inside the 128-wide weight blocks: every offset class of 16 is hit.
  std::set<int64_t> offsets;
  for (const int64_t col : columns(4096)) offsets.insert(col % 128 / 8);
  EXPECT_EQ(offsets.size(), 16u);
}

TEST(Reference, OperandsAreTheDequantizedSyntheticValues) {
  const ReferenceProblem problem{OperandFormat::fp8_blockscale, {4, 300, 260, 2}, 11, 22};
  // Column 129 of batch 1, row 3 lies in A's second 1x128 group and B's (row 200) block (1, 1).
  const double a = decode_e4m3(synthetic::fp8_code(11, Stream::a_codes, (1 * 4 + 3) * 260 + 129)) *
                   double(synthetic::block_scale(11, Stream::a_scales, (1 * 4 + 3) * 3 + 1));
  EXPECT_EQ(a_value(problem, 1, 3, 129), a);
  const double b = decode_e4m3(synthetic::fp8_code(22, Stream::b_codes, (1 * 300 + 200) * 260 + 129)) *
                   double(synthetic::block_scale(22, Stream::b_scales, (1 * 3 + 1) * 3 + 1));
  EXPECT_EQ(b_value(problem, 1, 200, 129), b);

  const ReferenceProblem a16w8{OperandFormat::a16w8_blockscale, {4, 300, 260, 1}, 11, 22};
  EXPECT_EQ(a_value(a16w8, 0, 2, 5), decode_bf16(synthetic::bf16_value(11, Stream::a_bf16, 2 * 260 + 5)));
  const ReferenceProblem bf16{OperandFormat::bf16, {4, 300, 260, 1}, 11, 22};
  EXPECT_EQ(b_value(bf16, 0, 7, 9), decode_bf16(synthetic::bf16_value(22, Stream::b_bf16, 7 * 260 + 9)));
}

TEST(Reference, ElementIsTheDotProductOverK) {
  const ReferenceProblem problem{OperandFormat::a16w8_blockscale, {2, 3, 200, 1}, 5, 6};
  double expected = 0;
  for (int64_t k = 0; k < 200; ++k) expected += a_value(problem, 0, 1, k) * b_value(problem, 0, 2, k);
  EXPECT_DOUBLE_EQ(reference_element(problem, {0, 1, 2}), expected);
}

class CompareTest : public ::testing::Test {
 protected:
  ReferenceProblem problem{OperandFormat::fp8_blockscale, {5, 7, 300, 2}, std::random_device{}(), std::random_device{}()};
  std::vector<OutputIndex> indices = sample_output(problem.shape, 1000);
  std::vector<uint16_t> exact_bf16() const {
    std::vector<uint16_t> out;
    for (const auto& index : indices) out.push_back(encode_bf16(float(reference_element(problem, index))));
    return out;
  }
};

TEST_F(CompareTest, RoundedReferencePassesWithBf16SizedError) {
  const CheckResult result = compare_with_reference(problem, indices, exact_bf16());
  EXPECT_EQ(result.elements_checked, int64_t(indices.size()));
  EXPECT_EQ(result.unwritten, 0);
  EXPECT_LE(result.rel_err, std::exp2(-8.0));
  EXPECT_TRUE(result.passed(1e-2));
}

TEST_F(CompareTest, PoisonCountsAsUnwrittenAndFails) {
  auto out = exact_bf16();
  out[3] = kPoisonBf16;
  const CheckResult result = compare_with_reference(problem, indices, out);
  EXPECT_EQ(result.unwritten, 1);
  EXPECT_FALSE(result.passed(1e-2));
}

TEST_F(CompareTest, WeightRowsKeptFromAnEarlierCheckNeverStandInForOtherWeights) {
  const std::vector<uint16_t> exact = exact_bf16();
  ASSERT_TRUE(compare_with_reference(problem, indices, exact).passed(1e-2));
  ReferenceProblem other = problem;
  other.seed_b += 1;
  EXPECT_FALSE(compare_with_reference(other, indices, exact).passed(1e-2));
  ReferenceProblem wider = problem;
  wider.shape.n += 1;  // another weight shape: the rows are other rows
  EXPECT_FALSE(compare_with_reference(wider, indices, exact).passed(1e-2));
  const CheckResult again = compare_with_reference(problem, indices, exact);
  EXPECT_TRUE(again.passed(1e-2));
  EXPECT_LE(again.rel_err, std::exp2(-8.0));
}

TEST_F(CompareTest, WrongWeightsFail) {
  ReferenceProblem other = problem;
  other.seed_b += 1;
  const CheckResult result = compare_with_reference(other, indices, exact_bf16());
  EXPECT_GT(result.rel_err, 0.5);
  EXPECT_FALSE(result.passed(1e-2));
}

TEST(Reference, RelativeErrorIsTheNormRatioAndSaysWhenOnlyTheReferenceIsZero) {
  EXPECT_DOUBLE_EQ(relative_error(1.0, 4.0), 0.5);
  EXPECT_DOUBLE_EQ(relative_error(0.0, 4.0), 0.0);
  EXPECT_DOUBLE_EQ(relative_error(0.0, 0.0), 0.0);
  EXPECT_EQ(relative_error(1e-30, 0.0), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace shapescope::kernels
