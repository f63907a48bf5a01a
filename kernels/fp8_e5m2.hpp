// FP8 E5M2 (OCP): sign, 5 exponent bits (bias 15), 2 mantissa bits, IEEE-style infinities and NaNs, max
// 57344. Encoding rounds to nearest even and saturates to ±57344 (infinity too), as
// __nv_cvt_float_to_fp8(..., __NV_SATFINITE, __NV_E5M2) does; NaN stays NaN (0x7F).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/fp8_rounding.hpp"
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

SHAPESCOPE_HD uint8_t encode_e5m2(float value) { return encode_ocp_fp8<2, 15, 0x7B>(value); }  // 0x7B: 57344

}  // namespace shapescope::kernels
