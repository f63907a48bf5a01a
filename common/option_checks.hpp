// Validation of numeric command-line options: NaN and infinities never pass,
// whatever the comparison says, and the message names the option and its range.
#pragma once

#include <string_view>

namespace shapescope {

// Throws UserError "<option> <value>: give a finite number <expected>" unless `value` is finite and `in_range`.
void require_number(std::string_view option, double value, bool in_range, std::string_view expected);

}  // namespace shapescope
