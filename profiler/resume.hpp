// Which rows of an existing profile a run may keep. A run resumes only rows
// measured the way it measures (the sidecar's measurement fingerprint); anything
// else is refused with the difference named, before any work, never mixed.
#pragma once

#include <filesystem>
#include <vector>

#include "common/profile_schema.hpp"
#include "profiler/measurement_fingerprint.hpp"
#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

// The rows of `csv` (none when it does not exist). Throws UserError, one line, when they may not be kept:
// the file is no shapescope profile (a study-format CSV, a folder), or it has rows and its sidecar is
// missing, carries no fingerprint, or a fingerprint that differs from `fingerprint` — unless the file
// already holds every M in `wanted_m`: then nothing is measured, so nothing is mixed (a complete file
// of an earlier build is shown as it is).
std::vector<ProfileRow> resumable_rows(const std::filesystem::path& csv, const MeasurementFingerprint& fingerprint,
                                       const std::vector<int64_t>& wanted_m);

// resumable_rows for every file `plan` writes on `device`: the setup's check, before any work.
void check_resumable(const SweepPlan& plan, const kernels::DeviceInfo& device);

}  // namespace shapescope::profiler
