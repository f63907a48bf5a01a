// The SM clock probe of the CUDA device (kernels/sm_clock_probe.hpp): a one-thread kernel spins for a fixed
// number of SM cycles (clock64) and records them beside the %globaltimer nanoseconds they took; MHz is
// cycles / ns * 1000. The spin is sized from the timer's measured step so that one step is at most 1% of it.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "kernels/cuda/device_buffer.hpp"

namespace shapescope::kernels::cuda {

struct ClockProbeSlot {
  unsigned long long cycles = 0;
  unsigned long long nanoseconds = 0;
};

// The smallest nonzero step between consecutive %globaltimer reads of one thread (synchronizes `stream`).
double globaltimer_step_ns(cudaStream_t stream);

class ClockProbes {
 public:
  // Measures the timer's step on `stream` and sizes the spin for `max_sm_clock_mhz`.
  ClockProbes(double max_sm_clock_mhz, cudaStream_t stream);

  bool enqueue(cudaStream_t stream);
  // One copy of the enqueued slots, after the stream's work; frees the slots.
  std::vector<double> collect(cudaStream_t stream);

  double timer_step_ns() const { return timer_step_ns_; }
  long long spin_cycles() const { return spin_cycles_; }

 private:
  double timer_step_ns_ = 0;
  long long spin_cycles_ = 0;
  DeviceBuffer<ClockProbeSlot> slots_;
  int enqueued_ = 0;
};

}  // namespace shapescope::kernels::cuda
