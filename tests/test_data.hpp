// The published profiles and tables the data-driven tests read: data/ in the
// repository (data/README.md says where each comes from), so a clone is enough.
#pragma once

#include <filesystem>

namespace shapescope::testing_data {

inline std::filesystem::path data_dir() { return std::filesystem::path(SHAPESCOPE_SOURCE_DIR) / "data"; }

}  // namespace shapescope::testing_data
