#include "profiler/clock_sampler.hpp"

#include <algorithm>
#include <chrono>

namespace shapescope::profiler {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

std::optional<SampledClock> summarize_clock(std::span<const ClockReading> readings, double closed_at_s) {
  if (readings.empty()) return std::nullopt;
  SampledClock summary;
  summary.readings = int(readings.size());
  summary.lowest_mhz = readings.front().sm_clock_mhz;
  double weighted = 0, span = 0;
  for (std::size_t i = 0; i < readings.size(); ++i) {
    summary.lowest_mhz = std::min(summary.lowest_mhz, readings[i].sm_clock_mhz);
    const double until = i + 1 < readings.size() ? readings[i + 1].at_s : closed_at_s;
    const double held = std::max(0.0, until - readings[i].at_s);
    weighted += held * readings[i].sm_clock_mhz;
    span += held;
  }
  // A window too short for any reading to hold: the plain mean.
  if (span <= 0) {
    for (const ClockReading& reading : readings) weighted += reading.sm_clock_mhz;
    summary.mean_mhz = weighted / double(readings.size());
  } else {
    summary.mean_mhz = weighted / span;
  }
  return summary;
}

ClockSampler::ClockSampler(const kernels::SmClockSource& source, double period_s)
    : source_(source), period_s_(period_s), thread_([this] { poll(); }) {}

ClockSampler::~ClockSampler() { stop(); }

void ClockSampler::poll() {
  const auto opened = Clock::now();
  auto since_open = [&] { return std::chrono::duration<double>(Clock::now() - opened).count(); };
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period_s_));
  auto next = opened;
  std::unique_lock lock(mutex_);
  while (true) {
    const bool last = stopping_;
    lock.unlock();
    const double at_s = since_open();
    if (const std::optional<double> clock = source_.read_sm_clock_mhz()) readings_.push_back({at_s, *clock});
    lock.lock();
    if (last) break;
    next += period;
    if (next < Clock::now()) next = Clock::now() + period;  // a slow poll: no burst to catch up
    wake_.wait_until(lock, next, [&] { return stopping_; });
  }
  closed_at_s_ = since_open();
}

std::optional<SampledClock> ClockSampler::stop() {
  if (!thread_.joinable()) return summarize_clock(readings_, closed_at_s_);
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  return summarize_clock(readings_, closed_at_s_);
}

}  // namespace shapescope::profiler
