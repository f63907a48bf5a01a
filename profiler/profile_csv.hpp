// A profile file on disk: read back for resuming, rewritten whole and atomically.
#pragma once

#include <filesystem>
#include <vector>

#include "common/profile_schema.hpp"

namespace shapescope::profiler {

// Rows of an existing profile (empty when the file does not exist). Throws UserError on a malformed
// file, a folder in its place, or a CSV of another format (no `status` column).
std::vector<ProfileRow> read_profile_csv(const std::filesystem::path& path);
// `on_disk` with the rows of `measured` in place of those of the same M.
std::vector<ProfileRow> merge_rows(std::vector<ProfileRow> on_disk, const std::vector<ProfileRow>& measured);
// Header + rows sorted by M, written via a temporary and a rename.
void write_profile_csv(const std::filesystem::path& path, std::vector<ProfileRow> rows);

}  // namespace shapescope::profiler
