// FP8 E4M3 in its two flavours, encoded and decoded bit-exactly in software so the CPU
// backend, the synthetic operands and the reference agree with the GPUs' cvt instructions
// (round to nearest even, saturating to the largest finite value):
//   e4m3     (OCP "fn", NVIDIA and gfx950): bias 7, S.1111.111 is NaN, ±0, max 448, as
//            __nv_cvt_float_to_fp8(..., __NV_SATFINITE, __NV_E4M3) does;
//   e4m3fnuz (gfx940..gfx942's FP8): bias 8, 0x80 is the only NaN, no -0, max 240.
// The same bits read as fnuz are half their e4m3 value (bias one higher), which is how
// e4m3 operands reach an fnuz matrix core: e4m3_code_as_fnuz() and the scale doubled.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/fp8_rounding.hpp"
#include "kernels/host_device.hpp"

namespace shapescope::kernels {

constexpr float kE4m3Max = 448.0f;

// Magnitude of the 7 low bits for exponent bias `bias`, before either flavour's NaN rule.
SHAPESCOPE_HD float decode_e4m3_magnitude(int code, int bias) {
  const int exponent = (code >> 3) & 0xF;
  const int mantissa = code & 0x7;
  if (exponent == 0) return ldexpf(float(mantissa), -bias - 2);  // subnormal: m/8 * 2^(1-bias)
  return ldexpf(float(8 + mantissa), exponent - bias - 3);       // (1 + m/8) * 2^(e-bias)
}

SHAPESCOPE_HD float decode_e4m3(uint8_t code) {
  const float magnitude = (code & 0x7F) == 0x7F ? NAN : decode_e4m3_magnitude(code, 7);
  return (code >> 7) ? -magnitude : magnitude;
}

SHAPESCOPE_HD float decode_e4m3fnuz(uint8_t code) {
  if (code == 0x80) return NAN;
  const float magnitude = decode_e4m3_magnitude(code, 8);
  return (code >> 7) ? -magnitude : magnitude;
}

SHAPESCOPE_HD uint8_t encode_e4m3(float value) { return encode_ocp_fp8<3, 7, 0x7E>(value); }

SHAPESCOPE_HD uint8_t encode_e4m3fnuz(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  if (value != value) return 0x80;
  const uint8_t code = encode_fp8_magnitude<3, 8, 0x7F>(bits & 0x7FFFFFFFu);
  return code == 0 ? uint8_t(0) : uint8_t(((bits >> 31) << 7) | code);  // no -0: 0x80 is NaN
}

// The fnuz code worth exactly half of e4m3 `code` (NaN stays NaN; -0 becomes 0).
SHAPESCOPE_HD uint8_t e4m3_code_as_fnuz(uint8_t code) {
  if ((code & 0x7F) == 0x7F) return 0x80;
  return code == 0x80 ? uint8_t(0) : code;
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
