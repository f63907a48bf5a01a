// E8M0 scales (OCP MX spec v1.0): an unsigned 8-bit exponent, value 2^(code - 127); 0xFF is NaN, there is
// no zero. The spec's shared scale of a block is 2^(floor(log2(amax)) - emax_elem), its exponent clamped to
// [-127, 127].
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/host_device.hpp"

namespace shapescope::kernels {

constexpr uint8_t kE8m0Nan = 0xFF;
constexpr int kE8m0Bias = 127;

SHAPESCOPE_HD float decode_e8m0(uint8_t code) { return code == kE8m0Nan ? NAN : ldexpf(1.0f, int(code) - kE8m0Bias); }

// The code of 2^exponent, clamped to the representable exponents [-127, 127].
SHAPESCOPE_HD uint8_t e8m0_code(int exponent) {
  const int clamped = exponent < -kE8m0Bias ? -kE8m0Bias : exponent > kE8m0Bias ? kE8m0Bias : exponent;
  return uint8_t(clamped + kE8m0Bias);
}

// The MX shared scale of a block whose largest magnitude is `amax` (> 0, finite) for elements whose largest
// power of two is 2^emax_elem. frexpf gives amax = f * 2^e with f in [0.5, 1): floor(log2(amax)) = e - 1.
SHAPESCOPE_HD uint8_t mx_shared_scale(float amax, int emax_elem) {
  int exponent = 0;
  frexpf(amax, &exponent);
  return e8m0_code(exponent - 1 - emax_elem);
}

}  // namespace shapescope::kernels
