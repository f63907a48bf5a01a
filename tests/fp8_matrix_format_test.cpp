// The per-target FP8 choice of the HIP kernels (kernels/fp8_matrix_format.hpp): which architectures feed
// the matrix cores e4m3fnuz, which OCP e4m3, which none; and that every finite e4m3 code fed to either
// keeps its value once the scale factor is applied (the fnuz path re-codes and doubles, gfx950 does not).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/fp8_e4m3.hpp"
#include "kernels/fp8_matrix_format.hpp"

namespace shapescope::kernels {
namespace {

TEST(Fp8MatrixFormat, ArchitectureNamesPickTheFormat) {
  EXPECT_EQ(fp8_matrix_format("gfx942:sramecc+:xnack-"), Fp8MatrixFormat::e4m3fnuz);
  EXPECT_EQ(fp8_matrix_format("gfx940"), Fp8MatrixFormat::e4m3fnuz);
  EXPECT_EQ(fp8_matrix_format("gfx941:xnack+"), Fp8MatrixFormat::e4m3fnuz);
  EXPECT_EQ(fp8_matrix_format("gfx950:sramecc+:xnack-"), Fp8MatrixFormat::e4m3);
  EXPECT_EQ(fp8_matrix_format("gfx950"), Fp8MatrixFormat::e4m3);
  for (const char* other : {"gfx90a:sramecc+:xnack-", "gfx908", "gfx1100", "gfx1201", "gfx9420", "gfx95", ""})
    EXPECT_EQ(fp8_matrix_format(other), Fp8MatrixFormat::none) << other;
  EXPECT_STREQ(fp8_matrix_format_name(fp8_matrix_format("gfx942")), "e4m3fnuz");
  EXPECT_STREQ(fp8_matrix_format_name(fp8_matrix_format("gfx950")), "e4m3");
}

float decode_as(Fp8MatrixFormat format, uint8_t code) {
  return format == Fp8MatrixFormat::e4m3fnuz ? decode_e4m3fnuz(code) : decode_e4m3(code);
}

TEST(Fp8MatrixFormat, EveryCodeKeepsItsValueThroughTheMatrixFormat) {
  for (const Fp8MatrixFormat format : {Fp8MatrixFormat::e4m3fnuz, Fp8MatrixFormat::e4m3, Fp8MatrixFormat::none}) {
    SCOPED_TRACE(fp8_matrix_format_name(format));
    for (int code = 0; code < 256; ++code) {
      const float value = decode_e4m3(uint8_t(code));
      const float fed = decode_as(format, matrix_code(format, uint8_t(code))) * matrix_scale_factor(format);
      if (std::isnan(value)) {
        EXPECT_TRUE(std::isnan(fed)) << "code " << code;
      } else {
        EXPECT_EQ(fed, value) << "code " << code;
      }
    }
  }
  EXPECT_EQ(matrix_scale_factor(Fp8MatrixFormat::e4m3fnuz), 2.0f);
  EXPECT_EQ(matrix_scale_factor(Fp8MatrixFormat::e4m3), 1.0f);
  EXPECT_NE(matrix_code(Fp8MatrixFormat::e4m3fnuz, 0x7F), 0x7F);  // e4m3's NaN is 0x80 in fnuz
}

}  // namespace
}  // namespace shapescope::kernels
