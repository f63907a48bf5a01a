#include "kernels/cuda/clock_probe.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/globaltimer.cuh"

namespace shapescope::kernels::cuda {

namespace {

// Probes a point may enqueue before they are collected: one per millisecond of samples, so a point of 4 s.
constexpr int kProbeSlots = 4096;
// The timer's step is at most this share of the spin's duration at the highest SM clock (lower clocks spin
// longer in ns, so the error only shrinks).
constexpr double kTimerStepShare = 0.01;
constexpr long long kMinSpinCycles = 20'000;
constexpr long long kMaxSpinCycles = 4'000'000;
constexpr int kStepReads = 1 << 16;

__global__ void globaltimer_step_kernel(unsigned long long* smallest_step) {
  unsigned long long smallest = ~0ull, previous = globaltimer_ns();
  for (int i = 0; i < kStepReads; ++i) {
    const unsigned long long now = globaltimer_ns();
    if (now != previous) smallest = min(smallest, now - previous);
    previous = now;
  }
  *smallest_step = smallest;
}

// The timer and the cycle counter are each read once before the spin and once after it, in the same order,
// so both count the same interval.
__global__ void clock_probe_kernel(ClockProbeSlot* slot, long long spin_cycles) {
  const unsigned long long start_ns = globaltimer_ns();
  const long long start_cycles = clock64();
  long long now = start_cycles;
  while (now - start_cycles < spin_cycles) now = clock64();
  const unsigned long long end_ns = globaltimer_ns();
  const long long end_cycles = clock64();
  slot->cycles = static_cast<unsigned long long>(end_cycles - start_cycles);
  slot->nanoseconds = end_ns - start_ns;
}

}  // namespace

double globaltimer_step_ns(cudaStream_t stream) {
  DeviceBuffer<unsigned long long> step(1);
  globaltimer_step_kernel<<<1, 1, 0, stream>>>(step.data());
  CUDA_CHECK(cudaGetLastError());
  unsigned long long host = 0;
  CUDA_CHECK(cudaMemcpyAsync(&host, step.data(), sizeof host, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  if (host == ~0ull) throw std::runtime_error("clock probe: %globaltimer did not move over 65536 reads");
  return double(host);
}

ClockProbes::ClockProbes(double max_sm_clock_mhz, cudaStream_t stream)
    : timer_step_ns_(globaltimer_step_ns(stream)), slots_(kProbeSlots) {
  const double cycles = timer_step_ns_ / kTimerStepShare * max_sm_clock_mhz / 1e3;
  spin_cycles_ = std::clamp(static_cast<long long>(std::ceil(cycles)), kMinSpinCycles, kMaxSpinCycles);
}

bool ClockProbes::enqueue(cudaStream_t stream) {
  if (enqueued_ == kProbeSlots) return false;
  clock_probe_kernel<<<1, 1, 0, stream>>>(slots_.data() + enqueued_, spin_cycles_);
  CUDA_CHECK(cudaGetLastError());
  ++enqueued_;
  return true;
}

std::vector<double> ClockProbes::collect(cudaStream_t stream) {
  std::vector<ClockProbeSlot> slots(std::size_t(std::exchange(enqueued_, 0)));
  if (slots.empty()) return {};
  CUDA_CHECK(cudaMemcpyAsync(slots.data(), slots_.data(), slots.size() * sizeof(ClockProbeSlot),
                             cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> mhz;
  mhz.reserve(slots.size());
  for (const ClockProbeSlot& slot : slots)
    if (slot.nanoseconds > 0) mhz.push_back(double(slot.cycles) / double(slot.nanoseconds) * 1e3);
  return mhz;
}

}  // namespace shapescope::kernels::cuda
