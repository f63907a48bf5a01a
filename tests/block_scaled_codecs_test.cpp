// The codecs of the block-scaled formats against their definitions, written independently of the headers:
// every e2m1 code (16), every e8m0 and e5m2 code (256), every ue4m3 scale code; encoding by brute-force
// nearest-value search with ties to the even code and saturation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/fp4_e2m1.hpp"
#include "kernels/fp8_e4m3.hpp"
#include "kernels/fp8_e5m2.hpp"
#include "kernels/scale_e8m0.hpp"
#include "tests/nearest_code.hpp"

namespace shapescope::kernels {
namespace {

using testing_support::nearest_positive_code;

// OCP MX spec v1.0, FP4 E2M1: bias 1, exponent field 0 subnormal (m/2 * 2^0), no infinity or NaN.
double ocp_e2m1_value(int code) {
  const int sign = (code & 0x8) ? -1 : 1;
  const int exponent_field = (code >> 1) & 0x3, mantissa_field = code & 1;
  if (exponent_field == 0) return sign * 0.5 * mantissa_field;
  return sign * std::pow(2.0, exponent_field - 1) * (1.0 + mantissa_field / 2.0);
}

// OCP 8-bit floating point spec, E5M2: bias 15, IEEE-style infinities and NaNs at exponent field 31.
double ocp_e5m2_value(int code) {
  const int sign = (code & 0x80) ? -1 : 1;
  const int exponent_field = (code >> 2) & 0x1F, mantissa_field = code & 0x3;
  if (exponent_field == 31)
    return mantissa_field ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (exponent_field == 0) return sign * std::pow(2.0, -14) * (mantissa_field / 4.0);
  return sign * std::pow(2.0, exponent_field - 15) * (1.0 + mantissa_field / 4.0);
}

// Values that exercise rounding: every code's value, every midpoint between neighbours and a hair either
// side of it, beyond the largest value, and random values over the whole range, each with both signs.
std::vector<float> probe_values(double (*value_of)(int), int largest_code) {
  std::vector<float> probes;
  for (int code = 0; code <= largest_code; ++code) {
    const double value = value_of(code);
    probes.push_back(float(value));
    if (code == largest_code) continue;
    const float midpoint = float((value + value_of(code + 1)) / 2);
    probes.push_back(midpoint);
    probes.push_back(std::nextafter(midpoint, 0.0f));
    probes.push_back(std::nextafter(midpoint, std::numeric_limits<float>::infinity()));
  }
  const double largest = value_of(largest_code);
  for (const double beyond : {largest * 1.01, largest * 4, 1e30}) probes.push_back(float(beyond));
  std::mt19937 random(7);
  std::uniform_real_distribution<double> fraction(0, 1.1);
  for (int i = 0; i < 2000; ++i) probes.push_back(float(fraction(random) * largest));
  std::vector<float> signed_probes;
  for (const float probe : probes) {
    signed_probes.push_back(probe);
    signed_probes.push_back(-probe);
  }
  return signed_probes;
}

TEST(E2m1, AllSixteenCodesDecodeAsTheSpecDefines) {
  const double expected[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (int code = 0; code < 16; ++code) {
    EXPECT_EQ(double(decode_e2m1(uint8_t(code))), ocp_e2m1_value(code)) << code;
    EXPECT_EQ(std::fabs(double(decode_e2m1(uint8_t(code)))), expected[code & 7]) << code;
    EXPECT_EQ(std::signbit(decode_e2m1(uint8_t(code))), code >= 8) << code;
  }
  EXPECT_EQ(kE2m1Max, 6.0f);
}

TEST(E2m1, EncodeRoundsToNearestEvenAndSaturates) {
  for (const float value : probe_values(ocp_e2m1_value, 7)) {
    const int magnitude_code = nearest_positive_code(value, ocp_e2m1_value, 7);
    const uint8_t expected = uint8_t((std::signbit(value) ? 0x8 : 0) | magnitude_code);
    EXPECT_EQ(encode_e2m1(value), expected) << value;
  }
  EXPECT_EQ(encode_e2m1(std::numeric_limits<float>::infinity()), 0x7);
  EXPECT_EQ(encode_e2m1(-std::numeric_limits<float>::infinity()), 0xF);
  EXPECT_EQ(encode_e2m1(std::numeric_limits<float>::quiet_NaN()), 0x7);
  // Every code survives a round trip.
  for (int code = 0; code < 16; ++code) EXPECT_EQ(encode_e2m1(decode_e2m1(uint8_t(code))), code);
}

TEST(E2m1, PackingPutsTheEvenKElementInTheLowNibble) {
  for (int even = 0; even < 16; ++even) {
    for (int odd = 0; odd < 16; ++odd) {
      const uint8_t byte = pack_e2m1(uint8_t(even), uint8_t(odd));
      EXPECT_EQ(byte, uint8_t(even | odd << 4));
      EXPECT_EQ(unpack_e2m1(byte, 10), even);
      EXPECT_EQ(unpack_e2m1(byte, 11), odd);
    }
  }
}

TEST(E8m0, AllCodesArePowersOfTwoAnd0xFFIsNaN) {
  for (int code = 0; code < 255; ++code) EXPECT_EQ(double(decode_e8m0(uint8_t(code))), std::ldexp(1.0, code - 127)) << code;
  EXPECT_TRUE(std::isnan(decode_e8m0(0xFF)));
  for (int exponent = -127; exponent <= 127; ++exponent) EXPECT_EQ(e8m0_code(exponent), exponent + 127);
  EXPECT_EQ(e8m0_code(-500), 0);
  EXPECT_EQ(e8m0_code(500), 254);  // never the NaN code
}

TEST(E8m0, MxSharedScaleIsFloorLog2OfAmaxLessEmax) {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> exponent(-60, 60);
  for (int i = 0; i < 5000; ++i) {
    const float amax = float(std::exp2(exponent(random)));
    for (const int emax : {2, 8, 15}) {
      const int expected = int(std::floor(std::log2(double(amax)))) - emax;
      EXPECT_EQ(mx_shared_scale(amax, emax), expected + 127) << amax << " " << emax;
    }
  }
  // Exact powers of two and the values just below them.
  EXPECT_EQ(mx_shared_scale(4.0f, 2), 127);
  EXPECT_EQ(mx_shared_scale(std::nextafter(4.0f, 0.0f), 2), 126);
  EXPECT_EQ(mx_shared_scale(448.0f, 8), 127);
}

TEST(E5m2, AllCodesDecodeAsTheSpecDefines) {
  for (int code = 0; code < 256; ++code) {
    const double expected = ocp_e5m2_value(code);
    const float decoded = decode_e5m2(uint8_t(code));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(decoded)) << code;
    } else {
      EXPECT_EQ(double(decoded), expected) << code;
    }
  }
}

TEST(E5m2, EncodeRoundsToNearestEvenAndSaturatesToTheLargestFinite) {
  for (const float value : probe_values(ocp_e5m2_value, 0x7B)) {
    const int magnitude_code = nearest_positive_code(value, ocp_e5m2_value, 0x7B);
    EXPECT_EQ(encode_e5m2(value), uint8_t((std::signbit(value) ? 0x80 : 0) | magnitude_code)) << value;
  }
  EXPECT_EQ(encode_e5m2(std::numeric_limits<float>::infinity()), 0x7B);
  EXPECT_TRUE(std::isnan(decode_e5m2(encode_e5m2(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(decode_e5m2(0x7B), kE5m2Max);
}

TEST(Ue4m3, TheUnsignedScaleCodesAreE4m3WithTheSignClear) {
  // NVFP4's block scales: an encoder given a non-negative value never sets the sign or writes NaN.
  for (int code = 0; code < 0x7F; ++code) {
    const float value = decode_e4m3(uint8_t(code));
    EXPECT_GE(value, 0.0f);
    EXPECT_EQ(encode_e4m3(value), code);
  }
  EXPECT_EQ(encode_e4m3(1e9f), 0x7E);
  EXPECT_EQ(decode_e4m3(0x7E), 448.0f);
}

}  // namespace
}  // namespace shapescope::kernels
