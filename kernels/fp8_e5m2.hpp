// FP8 E5M2 (OCP): sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE-style infinities and NaNs, max
// 57344. Encoding rounds to nearest even and saturates to ±57344 (infinity too), as
// __nv_cvt_float_to_fp8(..., __NV_SATFINITE, __NV_E5M2) does; NaN stays NaN (0x7F).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/host_device.hpp"

namespace shapescope::kernels {

constexpr float kE5m2Max = 57344.0f;

SHAPESCOPE_HD float decode_e5m2(uint8_t code) {
  const int exponent = (code >> 2) & 0x1F, mantissa = code & 0x3;
  float magnitude;
  if (exponent == 31) magnitude = mantissa ? NAN : INFINITY;
  else if (exponent == 0) magnitude = ldexpf(float(mantissa), -16);  // subnormal: m/4 * 2^-14
  else magnitude = ldexpf(float(4 + mantissa), exponent - 17);       // (1 + m/4) * 2^(e-15)
  return (code & 0x80) ? -magnitude : magnitude;
}

SHAPESCOPE_HD uint8_t encode_e5m2(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  const uint8_t sign = uint8_t((bits >> 31) << 7);
  if (value != value) return uint8_t(sign | 0x7F);
  const uint32_t magnitude_bits = bits & 0x7FFFFFFFu;
  float magnitude;
  memcpy(&magnitude, &magnitude_bits, sizeof magnitude);
  if (magnitude < 1.0f / 16384.0f) return uint8_t(sign | uint8_t(rintf(magnitude * 65536.0f)));  // 4: smallest normal
  int exponent = int(magnitude_bits >> 23) - 127 + 15;
  uint32_t mantissa = (magnitude_bits & 0x7FFFFFu) >> 21;
  const uint32_t remainder = magnitude_bits & 0x1FFFFFu;
  if (remainder > 0x100000u || (remainder == 0x100000u && (mantissa & 1u))) ++mantissa;
  if (mantissa == 4) {
    mantissa = 0;
    ++exponent;
  }
  if (exponent > 30) return uint8_t(sign | 0x7B);  // 57344; infinity lands here too
  return uint8_t(sign | exponent << 2 | int(mantissa));
}

}  // namespace shapescope::kernels
