// The SM clock polled on a thread of its own while a point's timed samples run, so that a point slowed by a
// clock dip between its start and end readings (a power-capped GPU) can be told from a kernel's own slowness.
// The measuring thread pays nothing per sample: the sampler thread sleeps between polls, and the readings are
// summed only when the window closes.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "kernels/sm_clock_source.hpp"

namespace shapescope::profiler {

struct ClockReading {
  double at_s = 0;  // since the window opened
  double sm_clock_mhz = 0;
};

struct SampledClock {
  double lowest_mhz = 0;
  double mean_mhz = 0;  // time-weighted: each reading holds until the next, the last until the window closed
  int readings = 0;
};

// The summary of readings in time order over a window that closed at `closed_at_s`; nothing without readings.
std::optional<SampledClock> summarize_clock(std::span<const ClockReading> readings, double closed_at_s);

class ClockSampler {
 public:
  // Starts polling `source` every `period_s` at once.
  ClockSampler(const kernels::SmClockSource& source, double period_s);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;

  // Stops polling (a last reading closes the window) and summarizes; nothing when no poll answered.
  std::optional<SampledClock> stop();

 private:
  void poll();

  const kernels::SmClockSource& source_;
  const double period_s_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<ClockReading> readings_;  // written by the sampler thread only until it is joined
  double closed_at_s_ = 0;
  std::thread thread_;
};

}  // namespace shapescope::profiler
