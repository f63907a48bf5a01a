// The one fake kernels::Device of the CPU tests: what it reports is scripted
// (kind, name, L2 size, timer durations, clock readings and probes, free memory, hardware
// counters, the passes a collection takes, the kernels a run launched and the stream holds that time out)
// and what it is asked is counted (flushes, captures and their replays, timers, kernel timers, clock readings,
// counter collections, stream holds), and the order of flushes, waits, stream holds and releases, counter
// passes and, where asked, timer starts and stops logged.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/kernel_counters.hpp"
#include "kernels/kernel.hpp"
#include "kernels/sm_clock_probe.hpp"
#include "kernels/stream_hold.hpp"
#include "kernels/throttle_accounting.hpp"

namespace shapescope::testing_fakes {

struct DeviceScript {
  kernels::BackendKind kind = kernels::BackendKind::cuda;
  std::string name = "Fake GPU";
  std::size_t l2_bytes = 0;
  std::deque<double> durations_us = {100.0};   // one per timed run (or run in a replay); the last repeats
  std::deque<kernels::ClockSample> clocks;     // one per sample_clock(); the last repeats; none: no clock
  // One per read_throttle_accounting(); the last repeats; none: the device keeps no throttle accounting.
  std::deque<kernels::ThrottleReading> throttle;
  // What every SM clock probe measures; none: the device cannot probe (enqueues nothing).
  std::optional<double> probe_mhz;
  int probes_pending = 0;                      // enqueued, not yet collected
  std::size_t free_bytes = 0;
  int flushes = 0, captures = 0, timers = 0, kernel_timers = 0, empty_runs = 0;
  int batches = 0, batched_launches = 0;       // graph replays and the runs they held
  std::vector<kernels::PreparedGemm*> last_capture;
  std::size_t clock_readings = 0;
  bool has_counters = false;                   // counters(): a session, else null (as on the CPU)
  std::deque<KernelCounters> counters = {KernelCounters{}};  // one per collect(); the last repeats
  int counter_passes = 1;                      // passes (runs) one collect() takes
  // "flush", "synchronize", "hold", "release", "counted pass" (and "start", "stop" under log_timers), in order
  std::vector<std::string> device_log;
  bool log_timers = false;
  int holds = 0, releases = 0;
  int holds_to_time_out = 0;                   // the next holds end by their timeout
  long long timed_out_holds = 0;
  std::string launched;                        // what a kernel timer says a region launched
  int counter_collections = 0;

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
  std::optional<kernels::ThrottleReading> next_throttle() {
    if (throttle.empty()) return std::nullopt;
    const kernels::ThrottleReading reading = throttle.front();
    if (throttle.size() > 1) throttle.pop_front();
    return reading;
  }
};

class FakeTimer final : public kernels::Timer {
 public:
  explicit FakeTimer(DeviceScript& script) : script_(script) {}
  void start() override {
    if (script_.log_timers) script_.device_log.push_back("start");
  }
  void stop() override {
    if (script_.log_timers) script_.device_log.push_back("stop");
    elapsed_ = script_.next_duration();
  }
  double elapsed_us() override { return elapsed_; }
  std::string launched() const override { return script_.launched; }

 private:
  DeviceScript& script_;
  double elapsed_ = 0;
};

// A replay takes one scripted duration per run in it.
class FakeSequence final : public kernels::RunSequence {
 public:
  FakeSequence(DeviceScript& script, std::vector<kernels::PreparedGemm*> runs)
      : script_(script), runs_(std::move(runs)) {}
  double replay_us() override {
    ++script_.batches;
    script_.batched_launches += int(runs_.size());
    double total = 0;
    for (kernels::PreparedGemm* run : runs_) {
      run->run();
      total += script_.next_duration();
    }
    return total;
  }

 private:
  DeviceScript& script_;
  std::vector<kernels::PreparedGemm*> runs_;
};

// The device's empty kernel: counted, moves nothing.
class FakeEmptyRun final : public kernels::PreparedGemm {
 public:
  explicit FakeEmptyRun(DeviceScript& script) : script_(script) {}
  void run() override { ++script_.empty_runs; }
  kernels::CheckResult check() override { return {}; }
  std::string launch_name() const override { return "empty"; }
  double min_bytes() const override { return 0; }

 private:
  DeviceScript& script_;
};

// Runs the run once per scripted pass, each after the caller's preparation, and hands
// back the scripted counters.
class FakeCounterSession final : public kernels::CounterSession {
 public:
  explicit FakeCounterSession(DeviceScript& script) : script_(script) {}
  KernelCounters collect(kernels::PreparedGemm& run, const std::function<void()>& before_each_pass) override {
    for (int pass = 0; pass < script_.counter_passes; ++pass) {
      before_each_pass();
      script_.device_log.push_back("counted pass");
      run.run();
    }
    ++script_.counter_collections;
    const KernelCounters counters = script_.counters.front();
    if (script_.counters.size() > 1) script_.counters.pop_front();
    return counters;
  }

 private:
  DeviceScript& script_;
};

class FakeDevice final : public kernels::Device,
                         public kernels::ThrottleAccountingSource,
                         public kernels::SmClockProbe,
                         public kernels::StreamHold {
 public:
  explicit FakeDevice(DeviceScript& script) : script_(script) {}
  kernels::BackendKind kind() const override { return script_.kind; }
  kernels::DeviceInfo info() const override {
    kernels::DeviceInfo info;
    info.name = script_.name;
    info.backend = kernels::to_string(script_.kind);
    info.l2_bytes = script_.l2_bytes;
    return info;
  }
  std::unique_ptr<kernels::Timer> make_timer() override {
    ++script_.timers;
    return std::make_unique<FakeTimer>(script_);
  }
  void flush_cache() override {
    ++script_.flushes;
    script_.device_log.push_back("flush");
  }
  void synchronize() override { script_.device_log.push_back("synchronize"); }
  std::size_t free_memory_bytes() const override { return script_.free_bytes; }
  std::optional<kernels::ClockSample> sample_clock() const override { return script_.next_clock(); }
  bool enqueue_probe() override {
    if (!script_.probe_mhz) return false;
    script_.device_log.push_back("probe");
    ++script_.probes_pending;
    return true;
  }
  std::vector<double> collect_probes() override {
    return std::vector<double>(std::size_t(std::exchange(script_.probes_pending, 0)), script_.probe_mhz.value_or(0));
  }
  void hold() override {
    ++script_.holds;
    script_.device_log.push_back("hold");
    if (script_.holds_to_time_out > 0) {
      --script_.holds_to_time_out;
      ++script_.timed_out_holds;
    }
  }
  void release() noexcept override {
    ++script_.releases;
    script_.device_log.push_back("release");
  }
  long long timed_out_holds() const override { return script_.timed_out_holds; }
  std::optional<kernels::ThrottleReading> read_throttle_accounting() const override {
    return script_.next_throttle();
  }
  std::unique_ptr<kernels::RunSequence> capture(const std::vector<kernels::PreparedGemm*>& runs) override {
    ++script_.captures;
    script_.last_capture = runs;
    return std::make_unique<FakeSequence>(script_, runs);
  }
  std::unique_ptr<kernels::Timer> make_kernel_timer() override {
    ++script_.kernel_timers;
    return std::make_unique<FakeTimer>(script_);
  }
  std::unique_ptr<kernels::PreparedGemm> empty_run() override { return std::make_unique<FakeEmptyRun>(script_); }
  std::unique_ptr<kernels::CounterSession> counters() override {
    return script_.has_counters ? std::make_unique<FakeCounterSession>(script_) : nullptr;
  }

 private:
  DeviceScript& script_;
};

}  // namespace shapescope::testing_fakes
