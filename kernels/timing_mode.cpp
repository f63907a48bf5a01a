// Names of the timing modes declared in kernel.hpp.
#include <fmt/format.h>

#include "common/user_error.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels {

std::string to_string(TimingMode mode) {
  switch (mode) {
    case TimingMode::events: return "events";
    case TimingMode::graph: return "graph";
    case TimingMode::kernel: return "kernel";
  }
  return "unknown";
}

TimingMode parse_timing_mode(const std::string& text) {
  for (TimingMode mode : {TimingMode::events, TimingMode::graph, TimingMode::kernel})
    if (text == to_string(mode)) return mode;
  throw UserError(fmt::format("timing mode '{}' is not one of events, graph, kernel", text));
}

}  // namespace shapescope::kernels
