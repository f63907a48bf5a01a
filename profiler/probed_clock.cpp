#include "profiler/probed_clock.hpp"

#include <algorithm>
#include <numeric>

namespace shapescope::profiler {

std::optional<ProbedClock> summarize_probes(std::span<const double> probe_mhz) {
  if (probe_mhz.empty()) return std::nullopt;
  ProbedClock summary;
  summary.probes = int(probe_mhz.size());
  summary.lowest_mhz = *std::min_element(probe_mhz.begin(), probe_mhz.end());
  summary.mean_mhz = std::accumulate(probe_mhz.begin(), probe_mhz.end(), 0.0) / double(probe_mhz.size());
  return summary;
}

}  // namespace shapescope::profiler
