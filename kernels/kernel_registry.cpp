// The process-wide kernel registry declared in kernel.hpp.
#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/user_error.hpp"
#include "kernels/entry_registry.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels {

namespace {
std::vector<KernelEntry>& registry() { return registered_entries<KernelEntry>(); }
}  // namespace

constexpr EnumName<BackendKind> kBackendNames[] = {
    {BackendKind::cpu, "cpu"},
    {BackendKind::cuda, "cuda"},
    {BackendKind::hip, "hip"},
};

std::string to_string(BackendKind kind) { return name_of(kBackendNames, kind); }

const std::vector<KernelEntry>& kernel_registry() { return registry(); }

const KernelEntry& find_kernel(const std::string& name) {
  if (const KernelEntry* entry = entry_named(registry(), name)) return *entry;
  throw UserError(
      fmt::format("unknown kernel '{}': use one of {} (see --list-kernels)", name, entry_names(registry())));
}

void register_kernel(KernelEntry entry) { register_entry(registry(), std::move(entry)); }

}  // namespace shapescope::kernels
