// The process-wide kernel registry declared in kernel.hpp.
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/enum_names.hpp"
#include "common/user_error.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels {

namespace {
std::vector<KernelEntry>& registry() {
  static std::vector<KernelEntry> entries;
  return entries;
}
}  // namespace

constexpr EnumName<BackendKind> kBackendNames[] = {
    {BackendKind::cpu, "cpu"},
    {BackendKind::cuda, "cuda"},
    {BackendKind::hip, "hip"},
};

std::string to_string(BackendKind kind) { return name_of(kBackendNames, kind); }

const std::vector<KernelEntry>& kernel_registry() { return registry(); }

const KernelEntry& find_kernel(const std::string& name) {
  for (const KernelEntry& entry : registry()) {
    if (entry.name == name) return entry;
  }
  std::vector<std::string> names;
  for (const KernelEntry& entry : registry()) names.push_back(entry.name);
  throw UserError(fmt::format("unknown kernel '{}': use one of {} (see --list-kernels)", name,
                              names.empty() ? std::string("<none registered>") : fmt::format("{}", fmt::join(names, ", "))));
}

// Registering a name again replaces its entry, so backends' register_*() calls are idempotent.
void register_kernel(KernelEntry entry) {
  auto& entries = registry();
  auto existing = std::find_if(entries.begin(), entries.end(),
                               [&](const KernelEntry& e) { return e.name == entry.name; });
  if (existing != entries.end()) {
    *existing = std::move(entry);
  } else {
    entries.push_back(std::move(entry));
  }
}

}  // namespace shapescope::kernels
