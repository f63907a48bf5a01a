#include "analyze/python_float.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace shapescope::analyze {

std::string python_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in d.ddde±x form, then laid out as Python does.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const std::string text(buffer, result.ptr);
  const std::size_t e = text.find('e');
  const bool negative = text[0] == '-';
  std::string digits;
  for (std::size_t i = negative ? 1 : 0; i < e; ++i) {
    if (text[i] != '.') digits += text[i];
  }
  const int exponent = std::atoi(text.c_str() + e + 1);
  // Built with append: GCC 12 warns falsely (-Wrestrict) on chains of operator+.
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out.append(digits, 0, 1);
    if (digits.size() > 1) out.append(".").append(digits, 1);
    out.append(exponent < 0 ? "e-" : "e+");
    const int magnitude = std::abs(exponent);
    if (magnitude < 10) out.append("0");
    return out.append(std::to_string(magnitude));
  }
  if (exponent < 0) {
    return out.append("0.").append(static_cast<std::size_t>(-exponent - 1), '0').append(digits);
  }
  const std::size_t integer_digits = static_cast<std::size_t>(exponent) + 1;
  if (digits.size() <= integer_digits) {
    return out.append(digits).append(integer_digits - digits.size(), '0').append(".0");
  }
  return out.append(digits, 0, integer_digits).append(".").append(digits, integer_digits);
}

}  // namespace shapescope::analyze
