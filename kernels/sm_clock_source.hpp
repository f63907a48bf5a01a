// A device's SM clock alone, read cheaply enough to be polled from a thread of its own while a point's samples
// run (profiler/clock_sampler.hpp): the start and end readings say nothing of a clock that dips between them.
// A device that can tell implements SmClockSource beside kernels::Device (the CUDA device, through NVML); the
// profiler asks for it by dynamic_cast, and samples nothing without it (the CPU backend, ROCm).
#pragma once

#include <optional>

namespace shapescope::kernels {

class SmClockSource {
 public:
  virtual ~SmClockSource() = default;
  // The SM clock now, in MHz; nothing when the device cannot say. Safe to call from any thread.
  virtual std::optional<double> read_sm_clock_mhz() const = 0;
};

}  // namespace shapescope::kernels
