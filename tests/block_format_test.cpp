// The named formats' table, parsing and sizes; block-scaled quantization as the OCP MX spec and NVIDIA's NVFP4
// recipe define it; the synthetic operands and the float64 reference of every operand format.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "common/block_format.hpp"
#include "kernels/block_quantize.hpp"
#include "kernels/reference_gemm.hpp"
#include "kernels/synthetic_operands.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope {
namespace {

using testing_support::user_error_of;

TEST(BlockFormat, TheTableIsIndexedByIdAndNamesParseBack) {
  for (size_t i = 0; i < kBlockFormats.size(); ++i) {
    EXPECT_EQ(size_t(kBlockFormats[i].id), i);
    EXPECT_EQ(parse_block_format(kBlockFormats[i].name), kBlockFormats[i].id);
  }
  EXPECT_EQ(block_format_names(),
            (std::vector<std::string>{"fp8_blockscale", "mxfp8", "mxfp4", "nvfp4", "e2m1_e8m0_16", "bf16"}));
  const std::string error = user_error_of([] { parse_block_format("fp4"); });
  EXPECT_NE(error.find("unknown format 'fp4'"), std::string::npos) << error;
  EXPECT_NE(error.find("nvfp4"), std::string::npos) << error;
}

TEST(BlockFormat, EachNamedFormatIsItsOwnersRecipe) {
  const BlockFormat& mxfp4 = block_format(BlockFormatId::mxfp4);
  EXPECT_EQ(mxfp4.weights, (OperandEncoding{ElementType::e2m1, ScaleType::e8m0, 32, 1, false}));
  EXPECT_TRUE(mxfp4.weight_only);
  EXPECT_EQ(std::string(mxfp4.dtype), "bf16");
  EXPECT_EQ(mxfp4.activations, OperandEncoding{});
  const BlockFormat& nvfp4 = block_format(BlockFormatId::nvfp4);
  EXPECT_EQ(nvfp4.weights, (OperandEncoding{ElementType::e2m1, ScaleType::ue4m3, 16, 1, true}));
  EXPECT_EQ(nvfp4.native_activations, nvfp4.weights);
  EXPECT_EQ(block_format(BlockFormatId::e2m1_e8m0_16).weights.block_k, 16);
  const BlockFormat& mxfp8 = block_format(BlockFormatId::mxfp8);
  EXPECT_EQ(mxfp8.activations, mxfp8.weights);
  EXPECT_EQ(mxfp8.weights, (OperandEncoding{ElementType::e4m3, ScaleType::e8m0, 32, 1, false}));
  EXPECT_EQ(std::string(mxfp8.dtype), "fp8");
  const BlockFormat& fp8 = block_format(BlockFormatId::fp8_blockscale);
  EXPECT_EQ(fp8.activations.block_rows, 1);
  EXPECT_EQ(fp8.weights.block_rows, 128);
  EXPECT_EQ(fp8.weights.scale, ScaleType::fp32);
  EXPECT_EQ(describe(nvfp4.weights), "e2m1, ue4m3 scale per 1x16, fp32 per-tensor scale");
}

TEST(BlockFormat, OperandBytesCountPackedElementsScalesAndTheTensorScale) {
  // 4096 x 7168 NVFP4: half a byte per element, one byte per 16, one fp32.
  EXPECT_EQ(operand_bytes(block_format(BlockFormatId::nvfp4).weights, 4096, 7168),
            4096.0 * 7168 / 2 + 4096.0 * 448 + 4);
  // A partial last block still has its scale: K = 100 in 32s is 4 blocks.
  EXPECT_EQ(operand_bytes(block_format(BlockFormatId::mxfp4).weights, 3, 100), 3 * 50.0 + 3 * 4);
  EXPECT_EQ(operand_bytes(block_format(BlockFormatId::fp8_blockscale).weights, 300, 260), 300 * 260.0 + 3 * 3 * 4);
  EXPECT_EQ(operand_bytes(OperandEncoding{}, 5, 7), 70.0);
}

TEST(BlockFormat, Fp4NeedsAnEvenK) {
  const OperandEncoding fp4 = block_format(BlockFormatId::nvfp4).weights;
  EXPECT_EQ(k_packing_problem(fp4, 7168), "");
  EXPECT_EQ(k_packing_problem(fp4, 100), "");  // a partial last block packs
  const std::string problem = k_packing_problem(fp4, 2049);
  EXPECT_NE(problem.find("K=2049"), std::string::npos) << problem;
  EXPECT_NE(problem.find("multiple of 2"), std::string::npos) << problem;
  EXPECT_EQ(k_packing_problem(block_format(BlockFormatId::mxfp8).weights, 2049), "");
}

}  // namespace

namespace kernels {
namespace {

std::vector<float> random_values(int64_t count, uint32_t seed, float spread_exponent) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal(0, 1);
  std::uniform_real_distribution<float> exponent(-spread_exponent, spread_exponent);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = normal(random) * std::exp2(exponent(random));
  return values;
}

// The element code nearest to `value` (ties to even, saturating) by search over every code of the element type.
uint16_t nearest_code(ElementType element, float value) {
  const int codes = element == ElementType::e2m1 ? 16 : 256;
  const double largest = element_max(element);
  const double target = std::min(std::fabs(double(value)), largest);
  int best = -1;
  double best_distance = INFINITY;
  for (int code = 0; code < codes / 2; ++code) {
    const double decoded = synthetic::decode_element(element, uint16_t(code));
    if (std::isnan(decoded) || decoded > largest) continue;
    const double distance = std::fabs(decoded - target);
    if (distance < best_distance || (distance == best_distance && (code & 1) == 0)) {
      best = code;
      best_distance = distance;
    }
  }
  return uint16_t(best | (std::signbit(value) ? codes / 2 : 0));
}

TEST(BlockScaledQuantize, MxScalesAreFloorLog2AmaxLessEmaxAndCodesTheNearestValues) {
  for (const BlockFormatId id : {BlockFormatId::mxfp4, BlockFormatId::mxfp8, BlockFormatId::e2m1_e8m0_16}) {
    const OperandEncoding encoding = block_format(id).weights;
    const int64_t rows = 5, cols = 200;  // 200 = 6 blocks of 32 and a partial one, or 12.5 of 16
    const std::vector<float> values = random_values(rows * cols, 3, 6);
    const BlockScaledQuantized q = quantize_block_scaled(values, rows, cols, encoding);
    const int64_t k_blocks = (cols + encoding.block_k - 1) / encoding.block_k;
    for (int64_t row = 0; row < rows; ++row) {
      for (int64_t kb = 0; kb < k_blocks; ++kb) {
        double amax = 0;
        for (int64_t c = kb * encoding.block_k; c < std::min(cols, (kb + 1) * encoding.block_k); ++c)
          amax = std::max(amax, std::fabs(double(values[size_t(row * cols + c)])));
        const int expected_exponent = int(std::floor(std::log2(amax))) - element_emax(encoding.element);
        EXPECT_EQ(q.scale_codes[size_t(row * k_blocks + kb)], expected_exponent + 127);
      }
      for (int64_t c = 0; c < cols; ++c) {
        const float value = values[size_t(row * cols + c)];
        const float scaled = float(double(value) / q.scale_at(row, c));
        EXPECT_EQ(q.codes[size_t(row * cols + c)], nearest_code(encoding.element, scaled)) << to_string(id);
        // At most the saturation of a block maximum just below 2^(emax_elem + 1) (e2m1: 8 -> 6, 2 x scale).
        EXPECT_LE(std::fabs(q.dequantized(row, c) - value), q.scale_at(row, c) * element_max(encoding.element) / 3);
      }
    }
  }
}

TEST(BlockScaledQuantize, Nvfp4HasATensorScaleAndE4m3BlockScalesOfAmaxOver6) {
  const OperandEncoding encoding = block_format(BlockFormatId::nvfp4).weights;
  const int64_t rows = 4, cols = 96;
  std::vector<float> values = random_values(rows * cols, 5, 3);
  const BlockScaledQuantized q = quantize_block_scaled(values, rows, cols, encoding);
  float amax_tensor = 0;
  for (const float value : values) amax_tensor = std::max(amax_tensor, std::fabs(value));
  EXPECT_EQ(q.tensor_scale, amax_tensor / (448.0f * 6.0f));
  double error_squares = 0, value_squares = 0;
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t kb = 0; kb < cols / 16; ++kb) {
      float amax = 0;
      for (int64_t c = kb * 16; c < (kb + 1) * 16; ++c) amax = std::max(amax, std::fabs(values[size_t(row * cols + c)]));
      const uint8_t scale_code = q.scale_codes[size_t(row * (cols / 16) + kb)];
      EXPECT_EQ(scale_code, encode_e4m3(amax / 6.0f / q.tensor_scale));
      EXPECT_LT(scale_code, 0x7F);  // unsigned, never NaN: the block scales fit e4m3
    }
    for (int64_t c = 0; c < cols; ++c) {
      const float value = values[size_t(row * cols + c)];
      EXPECT_EQ(q.codes[size_t(row * cols + c)], nearest_code(ElementType::e2m1, float(double(value) / q.scale_at(row, c))));
      error_squares += std::pow(q.dequantized(row, c) - value, 2);
      value_squares += double(value) * value;
    }
  }
  EXPECT_LT(std::sqrt(error_squares / value_squares), 0.15);  // e2m1 keeps one mantissa bit
}

TEST(BlockScaledQuantize, ZeroBlocksGetCodeZeroAndSaturationClampsToTheLargestElement) {
  const OperandEncoding mxfp4 = block_format(BlockFormatId::mxfp4).weights;
  std::vector<float> values(64, 0.0f);
  values[40] = 7.9f;  // floor(log2(7.9)) = 2: scale 2^0, 7.9 saturates to 6
  const BlockScaledQuantized q = quantize_block_scaled(values, 1, 64, mxfp4);
  EXPECT_EQ(q.scale_codes[0], 127);
  EXPECT_EQ(q.scale_codes[1], 127);
  EXPECT_EQ(q.codes[40], 0x7);
  for (size_t i = 0; i < 64; ++i)
    if (i != 40) {
      EXPECT_EQ(q.codes[i], 0);
    }
  EXPECT_THROW(quantize_block_scaled(values, 1, 64, block_format(BlockFormatId::fp8_blockscale).weights),
               std::invalid_argument);
}

TEST(SyntheticOperands, Fp4CodesSpanAllSixteenAndScalesTheirRealisticRanges) {
  std::set<int> codes, e8m0_fp4, e8m0_fp8;
  for (uint64_t i = 0; i < 4000; ++i) {
    codes.insert(synthetic::e2m1_code(9, synthetic::b_codes, i));
    e8m0_fp4.insert(synthetic::e8m0_scale_code(9, synthetic::b_scales, i, 2));
    e8m0_fp8.insert(synthetic::e8m0_scale_code(9, synthetic::b_scales, i, 8));
    const uint8_t ue4m3 = synthetic::ue4m3_scale_code(9, synthetic::b_scales, i);
    EXPECT_GE(decode_e4m3(ue4m3), 448.0f / 8 * 0.9f);
    EXPECT_LE(decode_e4m3(ue4m3), 448.0f);
  }
  EXPECT_EQ(codes.size(), 16u);
  EXPECT_EQ(e8m0_fp4, (std::set<int>{127 - 4, 127 - 3, 127 - 2, 127 - 1}));  // 2^(e - 2), e in -2..1
  EXPECT_EQ(e8m0_fp8, (std::set<int>{127 - 10, 127 - 9, 127 - 8, 127 - 7}));
  // The range a kernel checks at open is the codes the generator makes, ends included.
  for (const auto& [emax, made] : {std::pair{2, e8m0_fp4}, std::pair{8, e8m0_fp8}}) {
    const synthetic::ScaleCodeRange range = synthetic::e8m0_scale_code_range(emax);
    EXPECT_EQ(range.lowest, *made.begin()) << emax;
    EXPECT_EQ(range.highest, *made.rbegin()) << emax;
  }
  const float tensor = synthetic::nvfp4_tensor_scale(9, synthetic::b_tensor_scale, 3);
  EXPECT_GE(tensor * 448 * 6, 0.5f);
  EXPECT_LT(tensor * 448 * 6, 1.5f);
}

TEST(Reference, EveryOperandFormatDecodesItsSyntheticOperandsExactly) {
  using synthetic::Stream;
  const GemmShape shape{4, 300, 200, 2};
  const uint64_t seed_a = 11, seed_b = 22;
  // Row 7 of B, batch 1, column 37: block 1 of 32, block 2 of 16.
  const uint64_t b_index = (1 * 300 + 7) * 200 + 37;
  const double fp4 = decode_e2m1(synthetic::e2m1_code(seed_b, Stream::b_codes, b_index));
  const ReferenceProblem mxfp4{OperandFormat::a16w4_mxfp4, shape, seed_a, seed_b};
  EXPECT_EQ(b_value(mxfp4, 1, 7, 37),
            fp4 * decode_e8m0(synthetic::e8m0_scale_code(seed_b, Stream::b_scales, (1 * 300 + 7) * 7 + 1, 2)));
  const ReferenceProblem e2m1_16{OperandFormat::a16w4_e2m1_e8m0_16, shape, seed_a, seed_b};
  EXPECT_EQ(b_value(e2m1_16, 1, 7, 37),
            fp4 * decode_e8m0(synthetic::e8m0_scale_code(seed_b, Stream::b_scales, (1 * 300 + 7) * 13 + 2, 2)));
  const ReferenceProblem nvfp4{OperandFormat::a16w4_nvfp4, shape, seed_a, seed_b};
  EXPECT_EQ(b_value(nvfp4, 1, 7, 37),
            fp4 * double(decode_e4m3(synthetic::ue4m3_scale_code(seed_b, Stream::b_scales, (1 * 300 + 7) * 13 + 2))) *
                double(synthetic::nvfp4_tensor_scale(seed_b, Stream::b_tensor_scale, 1)));
  // Weight-only formats: A is the bf16 stream; the native NVFP4 and MXFP8 GEMMs scale A as they scale B.
  EXPECT_EQ(a_value(nvfp4, 1, 3, 5), decode_bf16(synthetic::bf16_value(seed_a, Stream::a_bf16, (1 * 4 + 3) * 200 + 5)));
  const ReferenceProblem native{OperandFormat::nvfp4, shape, seed_a, seed_b};
  EXPECT_EQ(a_value(native, 1, 3, 5),
            decode_e2m1(synthetic::e2m1_code(seed_a, Stream::a_codes, (1 * 4 + 3) * 200 + 5)) *
                double(decode_e4m3(synthetic::ue4m3_scale_code(seed_a, Stream::a_scales, (1 * 4 + 3) * 13 + 0))) *
                double(synthetic::nvfp4_tensor_scale(seed_a, Stream::a_tensor_scale, 1)));
  const ReferenceProblem mxfp8{OperandFormat::mxfp8, shape, seed_a, seed_b};
  EXPECT_EQ(a_value(mxfp8, 0, 2, 70),
            decode_e4m3(synthetic::fp8_code(seed_a, Stream::a_codes, 2 * 200 + 70)) *
                double(decode_e8m0(synthetic::e8m0_scale_code(seed_a, Stream::a_scales, 2 * 7 + 2, 8))));
}

TEST(Reference, DequantizedRowsMatchElementByElementIncludingAPartialLastBlock) {
  for (const OperandFormat format :
       {OperandFormat::fp8_blockscale, OperandFormat::a16w8_blockscale, OperandFormat::bf16, OperandFormat::mxfp8,
        OperandFormat::a16w4_mxfp4, OperandFormat::a16w4_nvfp4, OperandFormat::a16w4_e2m1_e8m0_16,
        OperandFormat::nvfp4}) {
    const ReferenceProblem problem{format, {3, 140, 200, 2}, 5, 6};  // K = 200: partial last block in every format
    for (const bool is_a : {true, false}) {
      const std::vector<double> row = dequantized_row(problem, is_a, 1, 2);
      for (int64_t k = 0; k < 200; ++k)
        ASSERT_EQ(row[size_t(k)], is_a ? a_value(problem, 1, 2, k) : b_value(problem, 1, 2, k))
            << int(format) << " " << is_a << " " << k;
    }
    // The check passes exact outputs and fails outputs of other weights.
    const std::vector<OutputIndex> indices = sample_output(problem.shape, 200);
    std::vector<uint16_t> exact, wrong;
    const ReferenceProblem other{format, problem.shape, 5, 7};
    for (const OutputIndex& index : indices) {
      exact.push_back(encode_bf16(float(reference_element(problem, index))));
      wrong.push_back(encode_bf16(float(reference_element(other, index))));
    }
    EXPECT_LT(compare_with_reference(problem, indices, exact).rel_err, 0.01) << int(format);
    EXPECT_GT(compare_with_reference(problem, indices, wrong).rel_err, 0.1) << int(format);
  }
}

TEST(OperandFormats, MinBytesCountEachOperandInItsEncoding) {
  const GemmShape shape{16, 4096, 7168, 1};
  EXPECT_EQ(gemm_min_bytes(OperandFormat::a16w4_nvfp4, shape),
            16.0 * 7168 * 2 + 4096.0 * 7168 / 2 + 4096.0 * 448 + 4 + 16.0 * 4096 * 2);
  EXPECT_EQ(gemm_min_bytes(OperandFormat::fp8_blockscale, shape),
            16.0 * 7168 + 16.0 * 56 * 4 + 4096.0 * 7168 + 32.0 * 56 * 4 + 16.0 * 4096 * 2);
  EXPECT_EQ(block_format_of(OperandFormat::a16w8_blockscale), BlockFormatId::fp8_blockscale);
  EXPECT_EQ(block_format_of(OperandFormat::a16w4_mxfp4), BlockFormatId::mxfp4);
  EXPECT_EQ(a16w4_operands(BlockFormatId::nvfp4), OperandFormat::a16w4_nvfp4);
}

}  // namespace
}  // namespace kernels
}  // namespace shapescope
