#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/block_quantize.hpp"
#include "kernels/fp8_e4m3.hpp"

namespace shapescope::kernels {
namespace {

std::vector<float> random_matrix(int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> values(size_t(rows * cols));
  for (float& v : values) v = normal(rng);
  return values;
}

TEST(BlockQuantize, WeightBlocksScaleToAmaxOver448AndRoundTripWithinE4m3Precision) {
  std::mt19937 rng(std::random_device{}());
  const int64_t rows = 200, cols = 300;  // partial blocks at both edges
  auto values = random_matrix(rows, cols, rng);
  values[size_t(150 * cols + 10)] = 37.0f;  // dominates block (1, 0)
  const BlockQuantized q = quantize_weights_128x128(values, rows, cols);
  ASSERT_EQ(q.scales.size(), 2u * 3u);
  EXPECT_EQ(q.scale_at(150, 10), 37.0f / 448.0f);
  EXPECT_EQ(q.codes[size_t(150 * cols + 10)], 0x7E);  // the amax lands on the largest code
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float v = values[size_t(r * cols + c)];
      // Half an e4m3 step: 2^-4 relative for normals, 2^-10 * scale in the subnormal range.
      const float bound = std::max(std::fabs(v) * 0.0625f, q.scale_at(r, c) * std::exp2(-10.0f));
      ASSERT_LE(std::fabs(q.dequantized(r, c) - v), bound * 1.0001f) << r << "," << c;
    }
  }
}

TEST(BlockQuantize, ActivationGroupsAreOneRowBy128) {
  std::mt19937 rng(std::random_device{}());
  const int64_t rows = 3, cols = 130;
  const auto values = random_matrix(rows, cols, rng);
  const BlockQuantized q = quantize_activations_1x128(values, rows, cols);
  ASSERT_EQ(q.scales.size(), 3u * 2u);
  for (int64_t r = 0; r < rows; ++r) {
    float amax = 0;
    for (int64_t c = 128; c < cols; ++c) amax = std::max(amax, std::fabs(values[size_t(r * cols + c)]));
    EXPECT_EQ(q.scale_at(r, 129), amax / kE4m3Max);
  }
}

TEST(BlockQuantize, ZeroBlockGetsUnitScaleAndZeroCodes) {
  const std::vector<float> zeros(256, 0.0f);
  const BlockQuantized q = quantize_activations_1x128(zeros, 2, 128);
  EXPECT_EQ(q.scales[0], 1.0f);
  EXPECT_EQ(q.dequantized(1, 5), 0.0f);
  EXPECT_THROW(quantize_blocks(zeros, 3, 128, 1, 128), std::invalid_argument);
}

}  // namespace
}  // namespace shapescope::kernels
