// What each timing mode adds to every run, whatever the kernel: one empty kernel timed
// in each mode, once per sweep, recorded in every sidecar beside the rows it qualifies.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"

namespace shapescope::profiler {

struct TimingFloor {
  kernels::TimingMode mode;
  std::optional<double> median_us;  // empty when the mode cannot run here
  std::string note;                 // why not, or how it was taken
};

struct TimingFloors {
  std::vector<TimingFloor> floors;  // events, graph, kernel
  nlohmann::json to_json() const;
};

// The events and graph floors always; the kernel floor only when `options.timing` is
// kernel, since kernel tracing slows every launch while it is on and its library stays
// loaded after (the note says so).
TimingFloors measure_timing_floors(kernels::Device& device, const MeasureOptions& options);

}  // namespace shapescope::profiler
