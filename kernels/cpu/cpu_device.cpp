// The CPU as a Device: wall-clock timers, cache flushing by overwriting a
// buffer twice the last-level cache, memory from /proc/meminfo. No clocks.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <Eigen/Core>
#include <fmt/format.h>

#include "kernels/cpu/cpu_system.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels {

namespace {

class SteadyTimer final : public Timer {
 public:
  void start() override { begin_ = std::chrono::steady_clock::now(); }
  void stop() override { end_ = std::chrono::steady_clock::now(); }
  double elapsed_us() override { return std::chrono::duration<double, std::micro>(end_ - begin_).count(); }

 private:
  std::chrono::steady_clock::time_point begin_, end_;
};

// On the CPU a run blocks until done: a sequence is its runs one after another.
class CpuSequence final : public RunSequence {
 public:
  explicit CpuSequence(std::vector<PreparedGemm*> runs) : runs_(std::move(runs)) {}
  double replay_us() override {
    SteadyTimer timer;
    timer.start();
    for (PreparedGemm* run : runs_) run->run();
    timer.stop();
    return timer.elapsed_us();
  }

 private:
  std::vector<PreparedGemm*> runs_;
};

class NothingRun final : public PreparedGemm {
 public:
  void run() override {}
  CheckResult check() override { return {}; }
  std::string launch_name() const override { return "nothing (CPU)"; }
  double min_bytes() const override { return 0; }
};

class CpuDevice final : public Device {
 public:
  explicit CpuDevice(int threads) : threads_(threads), llc_bytes_(cpu::last_level_cache_bytes()) {}

  BackendKind kind() const override { return BackendKind::cpu; }

  DeviceInfo info() const override {
    DeviceInfo info;
    info.name = cpu::cpu_model_name();
    info.backend = "cpu";
    info.multiprocessors = threads_;  // the threads our kernels use
    info.l2_bytes = llc_bytes_;
    info.memory_bytes = cpu::meminfo_bytes("MemTotal");
    info.driver_version = cpu::kernel_release();
    info.runtime_version = fmt::format("Eigen {}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION);
    return info;
  }

  std::unique_ptr<Timer> make_timer() override { return std::make_unique<SteadyTimer>(); }

  void flush_cache() override {
    if (flush_buffer_.empty()) flush_buffer_.resize(2 * llc_bytes_);
    // A new value each time, so every line is written and the stores cannot be skipped. One memset, not a byte
    // loop: under the sanitizers a byte loop over twice the last-level cache took ~160 ms a sample.
    ++flush_value_;
    std::memset(flush_buffer_.data(), flush_value_, flush_buffer_.size());
  }

  void synchronize() override {}  // CPU kernels return when done

  std::size_t free_memory_bytes() const override { return cpu::meminfo_bytes("MemAvailable"); }

  std::optional<ClockSample> sample_clock() const override { return std::nullopt; }

  std::unique_ptr<RunSequence> capture(const std::vector<PreparedGemm*>& runs) override {
    return std::make_unique<CpuSequence>(runs);
  }
  // A CPU kernel's duration is its run: the same clock as events.
  std::unique_ptr<Timer> make_kernel_timer() override { return std::make_unique<SteadyTimer>(); }
  std::unique_ptr<PreparedGemm> empty_run() override { return std::make_unique<NothingRun>(); }

 private:
  int threads_;
  std::size_t llc_bytes_;
  std::vector<char> flush_buffer_;
  char flush_value_ = 0;
};

}  // namespace

std::unique_ptr<Device> make_cpu_device(int threads) {
  if (threads <= 0) threads = int(std::max(1u, std::thread::hardware_concurrency()));
  return std::make_unique<CpuDevice>(threads);
}

}  // namespace shapescope::kernels
