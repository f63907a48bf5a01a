// A profile file on disk: read back for resuming, rewritten whole and atomically.
#pragma once

#include <filesystem>
#include <vector>

#include "common/profile_schema.hpp"

namespace shapescope::profiler {

// Rows of an existing profile (empty when the file does not exist). Throws UserError on a malformed file.
std::vector<ProfileRow> read_profile_csv(const std::filesystem::path& path);
// Header + rows sorted by M, written via a temporary and a rename.
void write_profile_csv(const std::filesystem::path& path, std::vector<ProfileRow> rows);

}  // namespace shapescope::profiler
