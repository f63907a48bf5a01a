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
// A sweep of more M values needs --allow-large-sweep: at 0.1 to 1 s a point, 100,000 points take a day or more.
inline constexpr int64_t kMaxSweepPoints = 100'000;
// No sweep is built beyond this, allowed or not: the list alone would take gigabytes.
inline constexpr int64_t kMaxLargeSweepPoints = 100'000'000;

// "START:STOP:STEP", STOP inclusive. Throws UserError naming the text and the expected form, or
// when the range holds more than `max_points` values (counted before any is built).
std::vector<int64_t> parse_m_range(const std::string& text, int64_t max_points = kMaxSweepPoints);
// "a,b,c" of positive integers. Throws UserError naming the bad entry.
std::vector<int64_t> parse_m_list(const std::string& text);

struct MSweepSpec {
  std::string preset;               // used when neither ranges nor lists are given
  std::vector<std::string> ranges;  // --m-range, repeatable
  std::vector<std::string> lists;   // --m-list, repeatable
  bool allow_large = false;         // --allow-large-sweep: up to kMaxLargeSweepPoints instead of kMaxSweepPoints
};
// The union of the ranges and lists (or the preset), sorted, without duplicates.
// Throws UserError when it holds more M values than the spec allows.
std::vector<int64_t> resolve_m_sweep(const MSweepSpec& spec);

}  // namespace shapescope::profiler
