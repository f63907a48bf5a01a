// The one fake kernels::Device of the CPU tests: what it reports is scripted
// (kind, name, timer durations, clock readings, free memory) and what it is
// asked is counted (flushes, batches, clock readings).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "kernels/kernel.hpp"

namespace shapescope::testing_fakes {

struct DeviceScript {
  kernels::BackendKind kind = kernels::BackendKind::cuda;
  std::string name = "Fake GPU";
  std::deque<double> durations_us = {100.0};   // one per timed run (or batched launch); the last repeats
  std::deque<kernels::ClockSample> clocks;     // one per sample_clock(); the last repeats; none: no clock
  std::size_t free_bytes = 0;
  int flushes = 0, batches = 0, batched_launches = 0;
  std::size_t clock_readings = 0;

  double next_duration() {
    const double duration = durations_us.front();
    if (durations_us.size() > 1) durations_us.pop_front();
    return duration;
  }
  std::optional<kernels::ClockSample> next_clock() {
    if (clocks.empty()) return std::nullopt;
    ++clock_readings;
    const kernels::ClockSample sample = clocks.front();
    if (clocks.size() > 1) clocks.pop_front();
    return sample;
  }
};

class FakeTimer final : public kernels::Timer {
 public:
  explicit FakeTimer(DeviceScript& script) : script_(script) {}
  void start() override {}
  void stop() override { elapsed_ = script_.next_duration(); }
  double elapsed_us() override { return elapsed_; }

 private:
  DeviceScript& script_;
  double elapsed_ = 0;
};

class FakeDevice final : public kernels::Device {
 public:
  explicit FakeDevice(DeviceScript& script) : script_(script) {}
  kernels::BackendKind kind() const override { return script_.kind; }
  kernels::DeviceInfo info() const override {
    kernels::DeviceInfo info;
    info.name = script_.name;
    info.backend = kernels::to_string(script_.kind);
    return info;
  }
  std::unique_ptr<kernels::Timer> make_timer() override { return std::make_unique<FakeTimer>(script_); }
  void flush_cache() override { ++script_.flushes; }
  void synchronize() override {}
  std::size_t free_memory_bytes() const override { return script_.free_bytes; }
  std::optional<kernels::ClockSample> sample_clock() const override { return script_.next_clock(); }
  double time_batched(kernels::PreparedGemm& gemm, int launches) override {
    ++script_.batches;
    script_.batched_launches += launches;
    for (int i = 0; i < launches; ++i) gemm.run();
    return launches * script_.next_duration();
  }

 private:
  DeviceScript& script_;
};

}  // namespace shapescope::testing_fakes
