// The stream hold of the CUDA device (kernels/cuda/stream_hold.hpp, nvbench's blocking kernel): work queued
// behind a hold waits for its release; a hold nobody releases ends by its timeout, is counted, and lets the
// queued work run, a launch queue filled behind it included; and a measured point times about the same with
// and without the hold.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_device.hpp"
#include "profiler/measure.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace shapescope {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// An event recorded on the device's stream (behind whatever it holds), destroyed with it.
class StreamEvent {
 public:
  explicit StreamEvent(kernels::cuda::CudaDevice& device) {
    CUDA_CHECK(cudaEventCreate(&event_));
    CUDA_CHECK(cudaEventRecord(event_, device.stream()));
  }
  ~StreamEvent() { cudaEventDestroy(event_); }
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;
  bool complete() const {
    const cudaError_t state = cudaEventQuery(event_);
    if (state == cudaErrorNotReady) return false;
    CUDA_CHECK(state);
    return true;
  }
  void wait() const { CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

TEST(StreamHold, QueuedWorkWaitsForTheRelease) {
  const auto opened = kernels::open_device();
  REQUIRE_GPU(opened);
  auto& device = kernels::cuda::as_cuda_device(*opened);
  const auto empty = device.empty_run();
  empty->run();  // loaded before the hold (a first launch may wait for the running kernels)
  device.synchronize();
  const long long timed_out_before = device.timed_out_holds();
  device.hold();
  empty->run();
  const StreamEvent behind(device);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(behind.complete()) << "work behind the hold ran before its release";
  const auto released = Clock::now();
  device.release();
  behind.wait();
  const double after_release_s = seconds_since(released);
  std::printf("  held 20 ms; the queued work ended %.3f ms after the release\n", after_release_s * 1e3);
  EXPECT_TRUE(behind.complete());
  EXPECT_LT(after_release_s, 0.5 * double(device.stream_hold_timeout_ns()) / 1e9);
  EXPECT_EQ(device.timed_out_holds(), timed_out_before);
}

TEST(StreamHold, AHoldNobodyReleasesTimesOutAndLetsTheQueuedWorkRun) {
  const auto opened = kernels::open_device();
  REQUIRE_GPU(opened);
  auto& device = kernels::cuda::as_cuda_device(*opened);
  const double timeout_s = double(device.stream_hold_timeout_ns()) / 1e9;
  const long long timed_out_before = device.timed_out_holds();
  const auto start = Clock::now();
  device.hold();
  const StreamEvent behind(device);
  behind.wait();  // never released: the timeout ends the hold
  const double waited_s = seconds_since(start);
  std::printf("  an unreleased hold (timeout %.0f ms) let the queued work end after %.1f ms\n", timeout_s * 1e3,
              waited_s * 1e3);
  EXPECT_GE(waited_s, 0.9 * timeout_s);
  EXPECT_LT(waited_s, timeout_s + 1.0);
  EXPECT_EQ(device.timed_out_holds(), timed_out_before + 1);
  device.release();  // late: nothing left to end

  // The next hold waits for its own release, not the late one.
  device.hold();
  const StreamEvent next(device);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(next.complete());
  device.release();
  next.wait();
  EXPECT_EQ(device.timed_out_holds(), timed_out_before + 1);
}

TEST(StreamHold, ALaunchQueueFilledBehindAHoldWaitsAtMostForTheTimeout) {
  const auto opened = kernels::open_device();
  REQUIRE_GPU(opened);
  auto& device = kernels::cuda::as_cuda_device(*opened);
  const double timeout_s = double(device.stream_hold_timeout_ns()) / 1e9;
  const auto empty = device.empty_run();
  empty->run();  // loaded before the hold
  device.synchronize();
  constexpr int kLaunches = 20000;  // far past CUDA's queue of pending launches
  const long long timed_out_before = device.timed_out_holds();
  const auto start = Clock::now();
  {
    const kernels::ScopedStreamHold held(&device);
    for (int i = 0; i < kLaunches; ++i) empty->run();
  }
  device.synchronize();
  const double took_s = seconds_since(start);
  const long long timed_out = device.timed_out_holds() - timed_out_before;
  std::printf("  %d launches behind a hold: %.1f ms to enqueue and run them; %lld hold timed out\n", kLaunches,
              took_s * 1e3, timed_out);
  EXPECT_LE(timed_out, 1);
  EXPECT_LT(took_s, timeout_s + 5.0);
}

TEST(StreamHold, AMeasuredPointTimesWithinAFewPercentOfNoHold) {
  const auto device = kernels::open_device();
  REQUIRE_GPU(device);
  const auto session = kernels::find_kernel("cublaslt_bf16").open(*device, {4096, 4096, 1}, 91);
  const auto gemm = session->prepare(256, 92);
  profiler::MeasureOptions options;
  options.min_samples = options.max_samples = 200;
  options.max_seconds_per_point = 10;
  // Alternated, so a clock drift falls on both alike.
  double held_us = 0, unheld_us = 0;
  int holds = 0, timed_out = 0;
  for (int round = 0; round < 3; ++round) {
    options.blocking_kernel = true;
    const profiler::Measurement held = profiler::measure(*device, *gemm, options);
    options.blocking_kernel = false;
    const profiler::Measurement unheld = profiler::measure(*device, *gemm, options);
    std::printf("  bf16 M=256 N=K=4096 cold events: %.2f us with the hold (%d holds), %.2f us without\n",
                held.median_us, held.holds, unheld.median_us);
    held_us += held.median_us / 3;
    unheld_us += unheld.median_us / 3;
    holds += held.holds;
    timed_out += held.timed_out_holds;
    EXPECT_EQ(unheld.holds, 0);
  }
  EXPECT_GT(holds, 0);
  EXPECT_EQ(timed_out, 0);
  EXPECT_NEAR(held_us / unheld_us, 1.0, 0.05);
}

}  // namespace
}  // namespace shapescope
