// The M values a sweep visits: named presets, START:STOP:STEP ranges, explicit lists.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shapescope::profiler {

// fairyspeed (the study's sweep), cudagraph (vLLM's capture sizes), large, cpu (small, for 2-core machines).
const std::vector<std::string>& m_preset_names();
// Throws UserError listing the preset names.
std::vector<int64_t> m_preset(const std::string& name);
// "START:STOP:STEP", STOP inclusive. Throws UserError naming the text and the expected form.
std::vector<int64_t> parse_m_range(const std::string& text);
// "a,b,c" of positive integers. Throws UserError naming the bad entry.
std::vector<int64_t> parse_m_list(const std::string& text);

struct MSweepSpec {
  std::string preset;               // used when neither ranges nor lists are given
  std::vector<std::string> ranges;  // --m-range, repeatable
  std::vector<std::string> lists;   // --m-list, repeatable
};
// The union of the ranges and lists (or the preset), sorted, without duplicates.
std::vector<int64_t> resolve_m_sweep(const MSweepSpec& spec);

}  // namespace shapescope::profiler
