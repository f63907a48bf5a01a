// The cuBLASLt block-scaling layout rule (kernels/cuda/cublaslt_scale_layout.hpp),
// checked on the CPU; the GPU test proves it against the library.
#include <gtest/gtest.h>

#include <set>

#include "kernels/cuda/cublaslt_scale_layout.hpp"

namespace shapescope::kernels::cuda {
namespace {

// DeepSeek-V3 TP8 K values: 2304 (18 K-blocks) and 256 (2) are the ones that need padding.
TEST(CublasltScaleLayout, WeightScaleRowsArePaddedToFourKBlocks) {
  EXPECT_EQ(cublaslt_blk128x128_scale_layout(7168, 2304).outer_stride, 20);
  EXPECT_EQ(cublaslt_blk128x128_scale_layout(7168, 256).outer_stride, 4);
  EXPECT_EQ(cublaslt_blk128x128_scale_layout(3072, 1536).outer_stride, 12);
  EXPECT_EQ(cublaslt_blk128x128_scale_layout(7168, 2048).outer_stride, 16);
  EXPECT_EQ(cublaslt_blk128x128_scale_layout(2112, 7168).outer_stride, 56);
  EXPECT_EQ(cublaslt_blk128x128_scale_layout(4096, 512).outer_stride, 4);
  EXPECT_EQ(cublaslt_blk128x128_scale_layout(512, 100).outer_stride, 4);  // a partial K block counts
}

TEST(CublasltScaleLayout, UnpaddedWeightScalesKeepTheLogicalRowLength) {
  EXPECT_EQ(cublaslt_blk128x128_scale_layout(7168, 2304, false).outer_stride, 18);
}

TEST(CublasltScaleLayout, WeightScalesAreKBlockContiguousAndSizedWithPadding) {
  const ScaleTensorLayout layout = cublaslt_blk128x128_scale_layout(2112, 2304);  // 17 row blocks (2112/128 = 16.5)
  EXPECT_EQ(layout.kgroup_stride, 1);
  EXPECT_EQ(layout.floats, 17 * 20);
  EXPECT_EQ(layout.offset(1, 0), 20);
  EXPECT_EQ(layout.offset(16, 17), 16 * 20 + 17);
}

TEST(CublasltScaleLayout, ActivationScalesAreRowMajorAcrossKGroupsWithoutPadding) {
  for (int64_t m : {1, 3, 4, 127, 129}) {
    const ScaleTensorLayout layout = cublaslt_vec128_scale_layout(m, 2304);
    EXPECT_EQ(layout.outer_stride, 1) << m;
    EXPECT_EQ(layout.kgroup_stride, m) << m;
    EXPECT_EQ(layout.floats, m * 18) << m;
  }
}

// Every logical scale gets its own slot inside the allocation, for both layouts.
TEST(CublasltScaleLayout, OffsetsAreDistinctAndInBounds) {
  for (const auto& [rows, k] : {std::pair<int64_t, int64_t>{129, 2304}, {7168, 256}, {3, 7168}}) {
    const ScaleTensorLayout activations = cublaslt_vec128_scale_layout(rows, k);
    const ScaleTensorLayout weights = cublaslt_blk128x128_scale_layout(rows, k);
    const int64_t kgroups = ceil_div(k, kScaleGroup);
    std::set<int64_t> activation_offsets, weight_offsets;
    for (int64_t g = 0; g < kgroups; ++g) {
      for (int64_t r = 0; r < rows; ++r) activation_offsets.insert(activations.offset(r, g));
      for (int64_t b = 0; b < ceil_div(rows, kScaleGroup); ++b) weight_offsets.insert(weights.offset(b, g));
    }
    EXPECT_EQ(int64_t(activation_offsets.size()), rows * kgroups);
    EXPECT_LT(*activation_offsets.rbegin(), activations.floats);
    EXPECT_EQ(int64_t(weight_offsets.size()), ceil_div(rows, kScaleGroup) * kgroups);
    EXPECT_LT(*weight_offsets.rbegin(), weights.floats);
  }
}

}  // namespace
}  // namespace shapescope::kernels::cuda
