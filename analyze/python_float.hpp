// Numbers written the way the study's pandas to_csv writes them (Python's
// repr: shortest round-trip digits, "130.0" not "130", exponent form below
// 1e-4 and from 1e16), so our study-format outputs are byte-identical to its.
#pragma once

#include <string>

namespace shapescope::analyze {

std::string python_repr(double value);

}  // namespace shapescope::analyze
