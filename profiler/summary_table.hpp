// The table `profile` prints at the end: one line per profile file.
#pragma once

#include <string>

#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

// One line per profile file: points, ok, failed, best and worst MFU with their M.
std::string file_table(const std::vector<FileSummary>& files);
// The file table, the sweep's wall time beside its timed kernel time, and the folder.
std::string summary_table(const SweepResult& result);

}  // namespace shapescope::profiler
