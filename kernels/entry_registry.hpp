// A registry of entries by name, shared by the dense (KernelEntry) and grouped (GroupedKernelEntry) kernels.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace shapescope::kernels {

// The process-wide entries of one kind, in registration order.
template <typename Entry>
std::vector<Entry>& registered_entries() {
  static std::vector<Entry> entries;
  return entries;
}

// Registering a name again replaces its entry, so backends' register_*() calls are idempotent.
template <typename Entry>
void register_entry(std::vector<Entry>& entries, Entry entry) {
  const auto existing =
      std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.name == entry.name; });
  if (existing != entries.end()) {
    *existing = std::move(entry);
  } else {
    entries.push_back(std::move(entry));
  }
}

// The entry named `name`; nullptr when none is.
template <typename Entry>
const Entry* entry_named(const std::vector<Entry>& entries, const std::string& name) {
  const auto found = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.name == name; });
  return found == entries.end() ? nullptr : &*found;
}

// "a, b, c" in registration order, for the message naming the valid choices.
template <typename Entry>
std::string entry_names(const std::vector<Entry>& entries) {
  if (entries.empty()) return "<none registered>";
  std::vector<std::string> names;
  for (const Entry& entry : entries) names.push_back(entry.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace shapescope::kernels
