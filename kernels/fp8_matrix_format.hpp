// Which FP8 flavour an AMD GPU's matrix cores read in v_mfma_f32_32x32x16_fp8_fp8, from its
// architecture name (hipDeviceProp_t::gcnArchName, e.g. "gfx942:sramecc+:xnack-"), and how our
// e4m3 operands reach it: the one place the HIP kernels take this from.
//   gfx940..gfx942 (MI300): e4m3fnuz, so codes are re-coded (each worth half) and scales doubled;
//   gfx950 (MI350/MI355): OCP e4m3, so codes and scales are used as they are;
//   anything else: no FP8 matrix instruction, the portable path.
// The device passes name the same targets in kernels/hip (__gfx940__ .. __gfx942__, __gfx950__).
#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/fp8_e4m3.hpp"
#include "kernels/host_device.hpp"

namespace shapescope::kernels {

enum class Fp8MatrixFormat : uint8_t { none, e4m3fnuz, e4m3 };

constexpr Fp8MatrixFormat fp8_matrix_format(std::string_view architecture) {
  const std::string_view target = architecture.substr(0, architecture.find(':'));  // drop ":sramecc+:xnack-"
  if (target == "gfx940" || target == "gfx941" || target == "gfx942") return Fp8MatrixFormat::e4m3fnuz;
  if (target == "gfx950") return Fp8MatrixFormat::e4m3;
  return Fp8MatrixFormat::none;
}

constexpr const char* fp8_matrix_format_name(Fp8MatrixFormat format) {
  switch (format) {
    case Fp8MatrixFormat::e4m3fnuz: return "e4m3fnuz";
    case Fp8MatrixFormat::e4m3: return "e4m3";
    case Fp8MatrixFormat::none: break;
  }
  return "none";
}

// The code the matrix core is fed for our e4m3 `code`, and the factor on its scale: together worth the same.
SHAPESCOPE_HD uint8_t matrix_code(Fp8MatrixFormat format, uint8_t code) {
  return format == Fp8MatrixFormat::e4m3fnuz ? e4m3_code_as_fnuz(code) : code;
}
SHAPESCOPE_HD float matrix_scale_factor(Fp8MatrixFormat format) {
  return format == Fp8MatrixFormat::e4m3fnuz ? 2.0f : 1.0f;
}

}  // namespace shapescope::kernels
