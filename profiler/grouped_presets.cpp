#include "profiler/grouped_presets.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/user_error.hpp"

namespace shapescope::profiler {

const std::vector<GroupedPreset>& grouped_presets() {
  static const std::vector<GroupedPreset> presets = {
      {"nvfp4_targets",
       "the four grouped problems of the GPU MODE NVFP4 group-GEMM task (B200): NVFP4, which the a16w4 kernels run "
       "as W4A16 and the FP8 grouped kernels in their own format",
       BlockFormatId::nvfp4,
       {{"g8_n4096_k7168", {80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168},
        {"g8_n7168_k2048", {40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048},
        {"g2_n3072_k4096", {192, 320}, 3072, 4096},
        {"g2_n4096_k1536", {128, 384}, 4096, 1536}}},
  };
  return presets;
}

const GroupedPreset& find_grouped_preset(const std::string& name) {
  std::vector<std::string> names;
  for (const GroupedPreset& preset : grouped_presets()) {
    if (preset.name == name) return preset;
    names.push_back(preset.name);
  }
  throw UserError(fmt::format("unknown --grouped-preset '{}'; use one of {}", name, fmt::join(names, ", ")));
}

}  // namespace shapescope::profiler
