// The SM clock measured on the device itself while a point's samples run: a short kernel between samples
// counts SM cycles against the device's nanosecond timer. NVML publishes its SM clock only every 100 ms
// (profiles/nvidia_h100_80gb_hbm3/2026-11-25-8f316af-clock-sampler/), too slowly for a clock dip of one or a
// few points of a sweep. A device that can probe implements SmClockProbe beside kernels::Device (the CUDA
// device); the profiler asks for it by dynamic_cast, and probes nothing without it (the CPU backend, ROCm).
#pragma once

#include <vector>

namespace shapescope::kernels {

class SmClockProbe {
 public:
  virtual ~SmClockProbe() = default;
  // Enqueues one probe behind the work already enqueued on the stream runs use; false when the probes not yet
  // collected fill the device's slots (the probe is then left out).
  virtual bool enqueue_probe() = 0;
  // Waits for the probes enqueued since the last collection and gives each one's SM clock in MHz, in order.
  virtual std::vector<double> collect_probes() = 0;
};

}  // namespace shapescope::kernels
