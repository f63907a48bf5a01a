// FP4 E2M1 (OCP MX spec v1.0): sign, 2 exponent bits (bias 1), 1 mantissa bit; no infinity, no NaN.
// The 16 codes are ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}, bit 3 the sign. Encoding rounds to nearest, ties to even
// (the even code), and saturates to ±6, as __nv_cvt_float2_to_fp4x2(..., __NV_E2M1, cudaRoundNearest) does;
// NaN, which E2M1 cannot hold, becomes +6. Packed two per byte, the even K element in the low nibble.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/host_device.hpp"

namespace shapescope::kernels {

constexpr float kE2m1Max = 6.0f;

SHAPESCOPE_HD float decode_e2m1(uint8_t code) {
  const int magnitude_code = code & 0x7;
  const int exponent = magnitude_code >> 1, mantissa = magnitude_code & 1;
  const float magnitude = exponent == 0 ? 0.5f * float(mantissa) : float(2 + mantissa) * float(1 << exponent) * 0.25f;
  return (code & 0x8) ? -magnitude : magnitude;
}

SHAPESCOPE_HD uint8_t encode_e2m1(float value) {
  if (value != value) return 0x7;
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  const uint8_t sign = uint8_t((bits >> 31) << 3);
  const float magnitude = value < 0 ? -value : value;
  // Midpoints between neighbouring codes; at a midpoint `<=` sends it to the lower code where that code is even.
  uint8_t code;
  if (magnitude <= 0.25f) code = 0;
  else if (magnitude < 0.75f) code = 1;
  else if (magnitude <= 1.25f) code = 2;
  else if (magnitude < 1.75f) code = 3;
  else if (magnitude <= 2.5f) code = 4;
  else if (magnitude < 3.5f) code = 5;
  else if (magnitude <= 5.0f) code = 6;
  else code = 7;
  return uint8_t(sign | code);
}

// Two codes in one byte: `even` (K index 2j) in the low nibble, `odd` (2j+1) in the high one.
SHAPESCOPE_HD uint8_t pack_e2m1(uint8_t even, uint8_t odd) { return uint8_t((even & 0xF) | ((odd & 0xF) << 4)); }
SHAPESCOPE_HD uint8_t unpack_e2m1(uint8_t byte, int64_t k) { return uint8_t((k & 1) ? byte >> 4 : byte & 0xF); }

}  // namespace shapescope::kernels
