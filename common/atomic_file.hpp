// Writes a file so a reader (or a crash) never sees it half written: a temporary
// beside it, flushed, then renamed over it.
#pragma once

#include <filesystem>
#include <string_view>

namespace shapescope {

void write_file_atomically(const std::filesystem::path& path, std::string_view content);
// Removes the temporaries (`<name>.tmp.<pid>.<n>`, and the `.probe.` files of the writability checks) that
// processes killed before they removed or renamed them left in `directory`; those of live processes stay.
// Returns how many it removed.
int remove_stale_temporaries(const std::filesystem::path& directory);
// Throws UserError naming the folder, the reason and `option` (the flag naming it) when it cannot be
// created or written.
void ensure_writable_directory(const std::filesystem::path& directory, std::string_view option = "--out");
// Throws UserError naming the file, the reason and `option` when no file can be written at `path` (its
// folder missing or read-only, the name too long). Leaves nothing behind.
void ensure_writable_file(const std::filesystem::path& path, std::string_view option);

}  // namespace shapescope
