// The SM clock over a point's timed samples, from the device's probes between them (kernels/sm_clock_probe.hpp),
// so that a point slowed by a clock dip between its start and end readings (a power-capped GPU) can be told
// from a kernel's own slowness.
#pragma once

#include <optional>
#include <span>

namespace shapescope::profiler {

// GPU time, in µs of samples, after which the next probe is due: the probes cost a few percent of the device's
// time at most, and a point of a few samples still sees several.
inline constexpr double kProbeEveryUs = 1000.0;

struct ProbedClock {
  double lowest_mhz = 0;
  double mean_mhz = 0;  // the probes are spread over the samples' GPU time about evenly: a plain mean
  int probes = 0;
};

// Nothing without probes.
std::optional<ProbedClock> summarize_probes(std::span<const double> probe_mhz);

}  // namespace shapescope::profiler
