// Rounding a float to an FP8 code as the GPUs' cvt instructions do (round to nearest even, saturating to the
// largest finite value), shared by the e4m3 flavours (fp8_e4m3.hpp) and e5m2 (fp8_e5m2.hpp): a code is a sign
// bit, 7 - kMantissaBits exponent bits of bias kBias and kMantissaBits mantissa bits.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/host_device.hpp"

namespace shapescope::kernels {

// The 7 low bits nearest to a finite |value| (its float bits), saturating at kMaxCode.
template <int kMantissaBits, int kBias, uint8_t kMaxCode>
SHAPESCOPE_HD uint8_t encode_fp8_magnitude(uint32_t magnitude_bits) {
  constexpr int kExponentBits = 7 - kMantissaBits;
  constexpr int kDroppedBits = 23 - kMantissaBits;                              // float mantissa bits below the code's
  constexpr float kSmallestNormal = 1.0f / float(1 << (kBias - 1));             // 2^(1-bias)
  constexpr float kSubnormalSteps = float(1 << (kBias - 1 + kMantissaBits));  // subnormals: a grid of 2^(1-bias-m)
  float magnitude;
  memcpy(&magnitude, &magnitude_bits, sizeof magnitude);
  if (magnitude < kSmallestNormal) {
    return uint8_t(rintf(magnitude * kSubnormalSteps));  // round half to even; 1 << kMantissaBits: smallest normal
  }
  int exponent = int(magnitude_bits >> 23) - 127 + kBias;
  uint32_t mantissa = (magnitude_bits & 0x7FFFFFu) >> kDroppedBits;
  const uint32_t remainder = magnitude_bits & ((1u << kDroppedBits) - 1u), half = 1u << (kDroppedBits - 1);
  if (remainder > half || (remainder == half && (mantissa & 1u))) ++mantissa;
  if (mantissa == (1u << kMantissaBits)) {
    mantissa = 0;
    ++exponent;
  }
  if (exponent >= (1 << kExponentBits)) return kMaxCode;  // infinity lands here too
  const uint8_t code = uint8_t(exponent << kMantissaBits | int(mantissa));
  return code > kMaxCode ? kMaxCode : code;
}

// An OCP FP8 code (e4m3 "fn", e5m2): the sign bit, NaN as S.1111111.
template <int kMantissaBits, int kBias, uint8_t kMaxCode>
SHAPESCOPE_HD uint8_t encode_ocp_fp8(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  const uint8_t sign = uint8_t((bits >> 31) << 7);
  if (value != value) return uint8_t(sign | 0x7F);
  return uint8_t(sign | encode_fp8_magnitude<kMantissaBits, kBias, kMaxCode>(bits & 0x7FFFFFFFu));
}

}  // namespace shapescope::kernels
