// What a sweep measures once on its device before any point: the settled SM clock (warm-up), the timing
// floors and the MFU peaks. A worker that runs many shards on one GPU measures it once and hands it to each
// shard's sweep (SweepPlan::baseline), so the shards of a work queue do not pay it over and over; every
// GPU still measures its own.
#pragma once

#include <memory>

#include "kernels/kernel.hpp"
#include "profiler/peak.hpp"
#include "profiler/timing_floors.hpp"

namespace shapescope::profiler {

struct SweepPlan;

struct DeviceBaseline {
  double steady_clock_mhz = 0;  // the SM clock the warm-up settled at; 0 without warm-up or a clock
  TimingFloors floors;
  PeakResolver peaks;           // caches each dtype's peak the first time a file asks
};

// Sets the plan's launch mode on `device`, warms it up when the plan asks (GPU only) and measures the floors.
std::shared_ptr<DeviceBaseline> measure_device_baseline(kernels::Device& device, const SweepPlan& plan);

}  // namespace shapescope::profiler
