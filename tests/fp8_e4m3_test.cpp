// e4m3, e4m3fnuz and bf16 codecs against formulas written independently of fp8_e4m3.hpp:
// decode from each format's definition in double precision, encode by brute-force
// nearest-value search over all finite codes with ties to the even code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/fp8_e4m3.hpp"
#include "tests/nearest_code.hpp"

namespace shapescope::kernels {
namespace {

using testing_support::nearest_positive_code;

// OCP 8-bit floating point spec, E4M3: bias 7, subnormals at exponent field 0,
// S.1111.111 is NaN, no infinities.
double ocp_e4m3_value(int code) {
  const int sign = (code & 0x80) ? -1 : 1;
  const int exponent_field = (code >> 3) & 0xF;
  const int mantissa_field = code & 0x7;
  if (exponent_field == 15 && mantissa_field == 7) return std::numeric_limits<double>::quiet_NaN();
  if (exponent_field == 0) return sign * std::pow(2.0, -6) * (mantissa_field / 8.0);
  return sign * std::pow(2.0, exponent_field - 7) * (1.0 + mantissa_field / 8.0);
}

// Every one of the 256 codes decodes to the value its format's definition gives (a NaN code to a NaN).
template <typename Decode>
void expect_every_code_decodes_as_defined(Decode decode, double (*value_of)(int)) {
  for (int code = 0; code < 256; ++code) {
    const double expected = value_of(code);
    const float decoded = decode(uint8_t(code));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(decoded)) << code;
    } else {
      EXPECT_EQ(double(decoded), expected) << "code " << code;
    }
  }
}

// Random values of either sign, 2^low_exponent to 2^high_exponent: `encode` gives the brute-force nearest code.
template <typename Encode>
void expect_random_values_encode_as_brute_force(Encode encode, uint8_t (*brute_force)(float), float low_exponent,
                                                float high_exponent) {
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> exponent(low_exponent, high_exponent);
  std::uniform_int_distribution<int> sign(0, 1);
  for (int i = 0; i < 20000; ++i) {
    const float value = (sign(rng) ? -1.0f : 1.0f) * std::exp2(exponent(rng));
    ASSERT_EQ(encode(value), brute_force(value)) << "value " << value;
  }
}

// Round to nearest finite e4m3 value, ties to even mantissa, saturating at ±448.
uint8_t brute_force_encode(float value) {
  if (std::isnan(value)) return std::signbit(value) ? 0xFF : 0x7F;
  return uint8_t((std::signbit(value) ? 0x80 : 0) | nearest_positive_code(value, ocp_e4m3_value, 0x7E));
}

TEST(Fp8E4m3, DecodesAll256CodesLikeTheOcpDefinition) {
  expect_every_code_decodes_as_defined(decode_e4m3, ocp_e4m3_value);
}

TEST(Fp8E4m3, KnownAnchorsFromTheSpec) {
  EXPECT_EQ(decode_e4m3(0x7E), 448.0f);             // largest finite
  EXPECT_EQ(decode_e4m3(0x38), 1.0f);
  EXPECT_EQ(decode_e4m3(0x08), 0.015625f);          // smallest normal, 2^-6
  EXPECT_EQ(decode_e4m3(0x01), 0.001953125f);       // smallest subnormal, 2^-9
  EXPECT_EQ(decode_e4m3(0xB8), -1.0f);
  EXPECT_TRUE(std::isnan(decode_e4m3(0x7F)));
  EXPECT_TRUE(std::isnan(decode_e4m3(0xFF)));
}

TEST(Fp8E4m3, EveryFiniteCodeRoundTrips) {
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7F) == 0x7F) continue;  // NaN
    EXPECT_EQ(encode_e4m3(decode_e4m3(uint8_t(code))), code) << "code " << code;
  }
  EXPECT_EQ(encode_e4m3(std::numeric_limits<float>::quiet_NaN()) & 0x7F, 0x7F);
}

TEST(Fp8E4m3, TiesBetweenNeighboursRoundToEvenIncludingSubnormals) {
  for (int code = 0; code < 0x7E; ++code) {
    const double low = ocp_e4m3_value(code), high = ocp_e4m3_value(code + 1);
    const float midpoint = float(0.5 * (low + high));  // exact in float: 5 significant bits
    ASSERT_EQ(double(midpoint), 0.5 * (low + high));
    const uint8_t even = (code & 1) == 0 ? uint8_t(code) : uint8_t(code + 1);
    EXPECT_EQ(encode_e4m3(midpoint), even) << "tie between codes " << code << " and " << code + 1;
    EXPECT_EQ(encode_e4m3(-midpoint), uint8_t(0x80 | even));
    EXPECT_EQ(encode_e4m3(std::nextafter(midpoint, 0.0f)), code);
    EXPECT_EQ(encode_e4m3(std::nextafter(midpoint, 1000.0f)), code + 1);
  }
}

TEST(Fp8E4m3, SaturatesToLargestFinite) {
  EXPECT_EQ(encode_e4m3(449.0f), 0x7E);
  EXPECT_EQ(encode_e4m3(464.0f), 0x7E);  // the would-be tie with 480 still saturates
  EXPECT_EQ(encode_e4m3(1e30f), 0x7E);
  EXPECT_EQ(encode_e4m3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(encode_e4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(encode_e4m3(1e-30f), 0x00);
}

TEST(Fp8E4m3, RandomValuesMatchBruteForceNearest) {
  expect_random_values_encode_as_brute_force(encode_e4m3, brute_force_encode, -14.0f, 10.0f);
}

// e4m3fnuz (AMD gfx940..942, the "FNUZ" FP8 of LLVM's APFloat): bias 8, subnormals at exponent
// field 0, 0x80 is the one NaN, no negative zero, no infinities, S.1111.111 is finite (±240).
double fnuz_e4m3_value(int code) {
  if (code == 0x80) return std::numeric_limits<double>::quiet_NaN();
  const int sign = (code & 0x80) ? -1 : 1;
  const int exponent_field = (code >> 3) & 0xF;
  const int mantissa_field = code & 0x7;
  if (exponent_field == 0) return sign * std::pow(2.0, -7) * (mantissa_field / 8.0);
  return sign * std::pow(2.0, exponent_field - 8) * (1.0 + mantissa_field / 8.0);
}

// Nearest finite fnuz value, ties to even, saturating at ±240; whatever rounds to zero is +0.
uint8_t brute_force_encode_fnuz(float value) {
  if (std::isnan(value)) return 0x80;
  const int best = nearest_positive_code(value, fnuz_e4m3_value, 0x7F);
  return best == 0 ? uint8_t(0) : uint8_t((std::signbit(value) ? 0x80 : 0) | best);
}

TEST(Fp8E4m3Fnuz, DecodesAll256CodesLikeTheFnuzDefinition) {
  expect_every_code_decodes_as_defined(decode_e4m3fnuz, fnuz_e4m3_value);
}

TEST(Fp8E4m3Fnuz, KnownAnchorsDifferFromOcp) {
  EXPECT_EQ(decode_e4m3fnuz(0x7F), 240.0f);          // largest finite: S.1111.111 is a number here
  EXPECT_EQ(decode_e4m3fnuz(0x40), 1.0f);            // bias 8: exponent field 8 is 2^0
  EXPECT_EQ(decode_e4m3fnuz(0x08), 0.0078125f);      // smallest normal, 2^-7
  EXPECT_EQ(decode_e4m3fnuz(0x01), 0.0009765625f);   // smallest subnormal, 2^-10
  EXPECT_EQ(decode_e4m3fnuz(0xFF), -240.0f);
  EXPECT_TRUE(std::isnan(decode_e4m3fnuz(0x80)));    // where OCP has -0
  EXPECT_EQ(decode_e4m3fnuz(0x00), 0.0f);
}

TEST(Fp8E4m3Fnuz, EveryFiniteCodeRoundTripsAndNoNegativeZeroIsMade) {
  for (int code = 0; code < 256; ++code) {
    if (code == 0x80) continue;  // NaN
    EXPECT_EQ(encode_e4m3fnuz(decode_e4m3fnuz(uint8_t(code))), code) << "code " << code;
  }
  EXPECT_EQ(encode_e4m3fnuz(std::numeric_limits<float>::quiet_NaN()), 0x80);
  EXPECT_EQ(encode_e4m3fnuz(-0.0f), 0x00);
  EXPECT_EQ(encode_e4m3fnuz(-1e-30f), 0x00);
  EXPECT_EQ(encode_e4m3fnuz(-0.00048828125f), 0x00);  // the tie between 0 and -2^-10 goes to the even code 0
}

TEST(Fp8E4m3Fnuz, TiesBetweenNeighboursRoundToEvenAndSaturateAt240) {
  for (int code = 0; code < 0x7F; ++code) {
    const double low = fnuz_e4m3_value(code), high = fnuz_e4m3_value(code + 1);
    const float midpoint = float(0.5 * (low + high));
    ASSERT_EQ(double(midpoint), 0.5 * (low + high));
    const uint8_t even = (code & 1) == 0 ? uint8_t(code) : uint8_t(code + 1);
    EXPECT_EQ(encode_e4m3fnuz(midpoint), even) << "tie between codes " << code << " and " << code + 1;
    EXPECT_EQ(encode_e4m3fnuz(std::nextafter(midpoint, 0.0f)), code);
    EXPECT_EQ(encode_e4m3fnuz(std::nextafter(midpoint, 1000.0f)), code + 1);
  }
  EXPECT_EQ(encode_e4m3fnuz(241.0f), 0x7F);
  EXPECT_EQ(encode_e4m3fnuz(448.0f), 0x7F);
  EXPECT_EQ(encode_e4m3fnuz(std::numeric_limits<float>::infinity()), 0x7F);
  EXPECT_EQ(encode_e4m3fnuz(-std::numeric_limits<float>::infinity()), 0xFF);
}

TEST(Fp8E4m3Fnuz, RandomValuesMatchBruteForceNearest) {
  expect_random_values_encode_as_brute_force(encode_e4m3fnuz, brute_force_encode_fnuz, -15.0f, 9.0f);
}

// How e4m3 operands feed an fnuz matrix core: the re-coded byte is worth exactly half.
TEST(Fp8E4m3Fnuz, E4m3CodesBecomeFnuzCodesOfHalfTheirValue) {
  for (int code = 0; code < 256; ++code) {
    const double ocp = ocp_e4m3_value(code);
    const double fnuz = fnuz_e4m3_value(e4m3_code_as_fnuz(uint8_t(code)));
    if (std::isnan(ocp)) {
      EXPECT_TRUE(std::isnan(fnuz)) << "code " << code;
    } else {
      EXPECT_EQ(2.0 * fnuz, ocp) << "code " << code;
    }
  }
}

TEST(Bf16, RoundsToNearestEvenAndDecodesExactly) {
  EXPECT_EQ(encode_bf16(1.0f), 0x3F80);
  EXPECT_EQ(decode_bf16(0x3F80), 1.0f);
  // 1 + 2^-8 is the tie between bf16 1.0 and 1 + 2^-7: even mantissa is 1.0.
  EXPECT_EQ(encode_bf16(1.0f + std::exp2(-8.0f)), 0x3F80);
  // 1 + 3*2^-8 is the tie between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  EXPECT_EQ(encode_bf16(1.0f + 3 * std::exp2(-8.0f)), 0x3F82);
  EXPECT_TRUE(std::isnan(decode_bf16(encode_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

}  // namespace
}  // namespace shapescope::kernels
