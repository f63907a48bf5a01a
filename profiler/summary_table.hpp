// The table `profile` prints at the end: one line per profile file.
#pragma once

#include <string>

#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

std::string summary_table(const SweepResult& result);

}  // namespace shapescope::profiler
