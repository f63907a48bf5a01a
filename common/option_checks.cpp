#include "common/option_checks.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

void require_number(std::string_view option, double value, bool in_range, std::string_view expected) {
  if (std::isfinite(value) && in_range) return;
  throw UserError(fmt::format("{} {}: give a finite number {}", option, value, expected));
}

}  // namespace shapescope
