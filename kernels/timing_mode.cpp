// Names of the timing modes declared in kernel.hpp.
#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/user_error.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels {

constexpr EnumName<TimingMode> kTimingModeNames[] = {
    {TimingMode::events, "events"},
    {TimingMode::graph, "graph"},
    {TimingMode::kernel, "kernel"},
};

std::string to_string(TimingMode mode) { return name_of(kTimingModeNames, mode); }

TimingMode parse_timing_mode(const std::string& text) {
  if (const std::optional<TimingMode> mode = value_named(kTimingModeNames, text)) return *mode;
  throw UserError(fmt::format("timing mode '{}' is not one of {}", text, names_listed(kTimingModeNames)));
}

}  // namespace shapescope::kernels
