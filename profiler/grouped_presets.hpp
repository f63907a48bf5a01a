// Fixed grouped problems (`profile --grouped-preset NAME`): group sizes given, not routed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/block_format.hpp"

namespace shapescope::profiler {

struct PresetGroupedProblem {
  std::string label;           // e.g. "g8_n4096_k7168"
  std::vector<int64_t> rows;   // rows per group
  int64_t n = 0, k = 0;
};

struct GroupedPreset {
  std::string name;
  std::string source;          // where the problems come from
  BlockFormatId format;        // the problems' block format (each kernel runs its own where it cannot take it)
  std::vector<PresetGroupedProblem> problems;
};

const std::vector<GroupedPreset>& grouped_presets();
// Throws UserError listing the preset names.
const GroupedPreset& find_grouped_preset(const std::string& name);

}  // namespace shapescope::profiler
