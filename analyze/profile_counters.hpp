// The hardware counters `profile --counters` wrote beside a profile (<csv>.counters.csv),
// read for `analyze --explain-with-counters`.
#pragma once

#include <filesystem>
#include <string>

#include "analyze/explain.hpp"

namespace shapescope::analyze {

// The counters file beside `profile`; throws UserError naming the missing file and the fix.
std::filesystem::path required_counters_file(const std::string& profile);

// Its counters by M.
CountersByM counters_beside(const std::string& profile);

}  // namespace shapescope::analyze
