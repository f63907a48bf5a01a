// FP8 E4M3 ("fn": no infinities, one NaN pattern per sign, max 448), encoded
// and decoded bit-exactly in software so the CPU backend, the synthetic operands
// and the reference agree with the GPU's cvt instructions (round to nearest even,
// saturating to ±448 as __nv_cvt_float_to_fp8(..., __NV_SATFINITE, __NV_E4M3) does).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/host_device.hpp"

namespace shapescope::kernels {

constexpr float kE4m3Max = 448.0f;

SHAPESCOPE_HD float decode_e4m3(uint8_t code) {
  const int sign = code >> 7;
  const int exponent = (code >> 3) & 0xF;
  const int mantissa = code & 0x7;
  float magnitude;
  if (exponent == 0xF && mantissa == 0x7) {
    magnitude = NAN;
  } else if (exponent == 0) {
    magnitude = ldexpf(float(mantissa), -9);  // subnormal: m/8 * 2^-6
  } else {
    magnitude = ldexpf(float(8 + mantissa), exponent - 10);  // (1 + m/8) * 2^(e-7)
  }
  return sign ? -magnitude : magnitude;
}

SHAPESCOPE_HD uint8_t encode_e4m3(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  const uint8_t sign = uint8_t((bits >> 31) << 7);
  if (value != value) return uint8_t(sign | 0x7F);
  const float magnitude = fabsf(value);
  if (magnitude >= kE4m3Max) return uint8_t(sign | 0x7E);  // saturate (inf too)
  if (magnitude < 0.015625f) {                             // below 2^-6: subnormal grid of 2^-9
    const float units = rintf(magnitude * 512.0f);         // round half to even
    return uint8_t(sign | uint8_t(units));                 // units == 8 is the smallest normal, 0x08
  }
  const uint32_t mag_bits = bits & 0x7FFFFFFFu;
  int exponent = int(mag_bits >> 23) - 127 + 7;
  uint32_t mantissa = (mag_bits & 0x7FFFFFu) >> 20;
  const uint32_t remainder = mag_bits & 0xFFFFFu;
  if (remainder > 0x80000u || (remainder == 0x80000u && (mantissa & 1u))) ++mantissa;
  if (mantissa == 8) {
    mantissa = 0;
    ++exponent;
  }
  if (exponent > 15 || (exponent == 15 && mantissa == 7)) return uint8_t(sign | 0x7E);
  return uint8_t(sign | uint8_t(exponent << 3) | uint8_t(mantissa));
}

// bfloat16 as its raw 16 bits, rounded to nearest even (NaN kept quiet).
SHAPESCOPE_HD uint16_t encode_bf16(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  if (value != value) return uint16_t((bits >> 16) | 0x40);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

SHAPESCOPE_HD float decode_bf16(uint16_t raw) {
  const uint32_t bits = uint32_t(raw) << 16;
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace shapescope::kernels
