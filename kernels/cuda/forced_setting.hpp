// A heuristic's choice forced from the environment (SHAPESCOPE_FP8_*, SHAPESCOPE_A16W4_*): the knobs of a
// calibration run and of the tests, unset in normal runs. Host side only.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <optional>

namespace shapescope::kernels::cuda {

// The variable's value (negative values read as 0), or nullopt when it is unset or empty.
inline std::optional<int> forced_setting(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  return std::max(0, std::atoi(value));
}

}  // namespace shapescope::kernels::cuda
