#include "profiler/m_sweep.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/engine_capture_sizes.hpp"
#include "common/user_error.hpp"

namespace shapescope::profiler {

namespace {

void append_range(std::vector<int64_t>& values, int64_t start, int64_t stop, int64_t step) {
  for (int64_t m = start; m <= stop; m += step) values.push_back(m);
}

// A positive integer, or nullopt.
std::optional<int64_t> positive(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty() || value < 1) return std::nullopt;
  return value;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

void sort_unique(std::vector<int64_t>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

}  // namespace

const std::vector<std::string>& m_preset_names() {
  static const std::vector<std::string> names = {"fairyspeed", "cudagraph", "large", "cpu"};
  return names;
}

std::vector<int64_t> m_preset(const std::string& name) {
  std::vector<int64_t> values;
  if (name == "fairyspeed") {
    values = {1, 2, 4, 6, 8, 10, 12, 14};
    append_range(values, 16, 32768, 4);
  } else if (name == "cudagraph") {
    values = vllm_default_capture_sizes();
    values.push_back(1024);
    values.push_back(8192);
  } else if (name == "large") {
    values = {10000, 16384, 20480, 32768, 65536, 128000, 131072, 260000, 262144};
  } else if (name == "cpu") {
    values = {1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256};
  } else {
    throw UserError(fmt::format("unknown --m-preset '{}': use one of {}, or --m-range / --m-list", name,
                                fmt::join(m_preset_names(), ", ")));
  }
  return values;
}

std::vector<int64_t> parse_m_range(const std::string& text) {
  const auto parts = split(text, ':');
  std::optional<int64_t> start, stop, step;
  if (parts.size() == 3) {
    start = positive(parts[0]);
    stop = positive(parts[1]);
    step = positive(parts[2]);
  }
  if (!start || !stop || !step || *stop < *start) {
    throw UserError(fmt::format(
        "--m-range '{}' is not START:STOP:STEP with positive integers and STOP >= START (e.g. 16:4096:16)", text));
  }
  std::vector<int64_t> values;
  append_range(values, *start, *stop, *step);
  return values;
}

std::vector<int64_t> parse_m_list(const std::string& text) {
  std::vector<int64_t> values;
  for (std::string_view part : split(text, ',')) {
    const auto value = positive(part);
    if (!value) {
      throw UserError(fmt::format("--m-list '{}': '{}' is not a positive integer; give M values like 1,16,4096", text,
                                  part));
    }
    values.push_back(*value);
  }
  return values;
}

std::vector<int64_t> resolve_m_sweep(const MSweepSpec& spec) {
  std::vector<int64_t> values;
  for (const std::string& range : spec.ranges) {
    const auto part = parse_m_range(range);
    values.insert(values.end(), part.begin(), part.end());
  }
  for (const std::string& list : spec.lists) {
    const auto part = parse_m_list(list);
    values.insert(values.end(), part.begin(), part.end());
  }
  if (spec.ranges.empty() && spec.lists.empty()) values = m_preset(spec.preset);
  sort_unique(values);
  return values;
}

}  // namespace shapescope::profiler
