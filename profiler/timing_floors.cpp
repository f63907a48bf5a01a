#include "profiler/timing_floors.hpp"

#include <exception>
#include <vector>

#include <fmt/format.h>

namespace shapescope::profiler {

namespace {
// Graph mode's floor: a replay of this many empty launches, per launch.
constexpr int kEmptyLaunchesPerReplay = 64;
}  // namespace

TimingFloors measure_timing_floors(kernels::Device& device, const MeasureOptions& options) {
  TimingFloors result;
  const std::unique_ptr<kernels::PreparedGemm> empty = device.empty_run();
  for (kernels::TimingMode mode : {kernels::TimingMode::events, kernels::TimingMode::graph, kernels::TimingMode::kernel}) {
    MeasureOptions floor_options = options;
    floor_options.timing = mode;
    floor_options.hot = false;
    const std::vector<kernels::PreparedGemm*> runs(mode == kernels::TimingMode::graph ? kEmptyLaunchesPerReplay : 1,
                                                   empty.get());
    TimingFloor floor{mode, std::nullopt, ""};
    if (mode == kernels::TimingMode::kernel && options.timing != mode) {
      floor.note = "not measured: kernel tracing would stay attached to this sweep's launches";
      result.floors.push_back(floor);
      continue;
    }
    try {
      const Measurement m = measure(device, runs, floor_options);
      floor.median_us = m.median_us;
      floor.note = fmt::format("{}, {} samples", empty->launch_name(), m.samples);
    } catch (const std::exception& error) {
      floor.note = error.what();
    }
    result.floors.push_back(floor);
  }
  return result;
}

nlohmann::json TimingFloors::to_json() const {
  nlohmann::json json = nlohmann::json::object();
  for (const TimingFloor& floor : floors) {
    json[kernels::to_string(floor.mode)] = {{"empty_kernel_us", floor.median_us ? nlohmann::json(*floor.median_us)
                                                                                : nlohmann::json(nullptr)},
                                            {"note", floor.note}};
  }
  return json;
}

}  // namespace shapescope::profiler
