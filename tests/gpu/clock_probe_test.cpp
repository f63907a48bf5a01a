// The SM clock probe of the CUDA device (kernels/cuda/clock_probe.hpp): its timer step and cost, and its clock
// against NVML's at a steady clock, after idling, and between the samples of a measured point.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_device.hpp"
#include "profiler/measure.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace shapescope {
namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// Probes back to back for about `seconds` of GPU time; their clocks.
std::vector<double> probe_for(kernels::cuda::CudaDevice& device, double seconds) {
  const double probe_s = double(device.clock_probes().spin_cycles()) / (device.info().max_sm_clock_mhz * 1e6);
  std::vector<double> mhz;
  for (int left = std::max(1, int(seconds / probe_s)); left > 0; left -= 4000) {
    const int probes = std::min(left, 4000);  // the device keeps 4096 uncollected
    for (int i = 0; i < probes; ++i) EXPECT_TRUE(device.enqueue_probe());
    const std::vector<double> collected = device.collect_probes();
    EXPECT_EQ(int(collected.size()), probes);  // every probe enqueued is collected
    mhz.insert(mhz.end(), collected.begin(), collected.end());
  }
  return mhz;
}

TEST(ClockProbe, TimerStepAndCostSizeTheSpin) {
  const auto opened = kernels::open_device();
  if (!opened) GTEST_SKIP() << kernels::cuda_unavailable_reason();
  auto& device = kernels::cuda::as_cuda_device(*opened);
  const kernels::cuda::ClockProbes& probes = device.clock_probes();
  const double max_mhz = device.info().max_sm_clock_mhz;
  const double spin_ns_at_max = double(probes.spin_cycles()) / max_mhz * 1e3;
  // A second measurement of the step agrees with the device's.
  const double step_ns = kernels::cuda::globaltimer_step_ns(device.stream());
  std::printf("  %%globaltimer step %.0f ns (again: %.0f ns); spin %lld cycles = %.1f us at %.0f MHz: step %.2f%%\n",
              probes.timer_step_ns(), step_ns, probes.spin_cycles(), spin_ns_at_max / 1e3, max_mhz,
              100 * probes.timer_step_ns() / spin_ns_at_max);
  EXPECT_GT(probes.timer_step_ns(), 0);
  EXPECT_LE(probes.timer_step_ns(), 0.01 * spin_ns_at_max * 1.0001);

  // Cost: 200 probes back to back between two events, and the host's enqueue.
  probe_for(device, 0.2);  // a busy GPU, so the clock is up
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start, device.stream()));
  const auto host_start = std::chrono::steady_clock::now();
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(device.enqueue_probe());
  const double enqueue_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - host_start).count() / 200;
  CUDA_CHECK(cudaEventRecord(stop, device.stream()));
  const std::vector<double> mhz = device.collect_probes();
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  const auto [low, high] = std::minmax_element(mhz.begin(), mhz.end());
  std::printf("  probe: %.2f us of GPU time each (back to back), %.2f us to enqueue; 200 probes read %.1f-%.1f MHz\n",
              ms * 1e3 / 200, enqueue_us, *low, *high);
  ASSERT_EQ(mhz.size(), 200u);
  EXPECT_LT(ms * 1e3 / 200, 3 * spin_ns_at_max / 1e3 + 20);
}

TEST(ClockProbe, AgreesWithNvmlAtASteadyClock) {
  const auto opened = kernels::open_device();
  if (!opened) GTEST_SKIP() << kernels::cuda_unavailable_reason();
  auto& device = kernels::cuda::as_cuda_device(*opened);
  // After idling: NVML's reading, then the first probes (the clock rises as work arrives).
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto idle = device.sample_clock();
  const std::vector<double> first = probe_for(device, 0.002);
  std::printf("  idle 1.5 s: NVML %.0f MHz, then the first probes %.1f MHz (first) %.1f MHz (median of %zu)\n",
              idle ? idle->sm_clock_mhz : 0.0, first.front(), median(first), first.size());
  // Steady: 0.5 s of probes, then NVML and 0.2 s more, three times.
  probe_for(device, 0.5);
  for (int round = 0; round < 3; ++round) {
    const auto nvml = device.sample_clock();
    ASSERT_TRUE(nvml);
    const std::vector<double> mhz = probe_for(device, 0.2);
    const auto nvml_after = device.sample_clock();
    const auto [low, high] = std::minmax_element(mhz.begin(), mhz.end());
    std::printf("  steady: NVML %.0f then %.0f MHz; %zu probes %.1f MHz median (%.1f-%.1f)\n", nvml->sm_clock_mhz,
                nvml_after ? nvml_after->sm_clock_mhz : 0.0, mhz.size(), median(mhz), *low, *high);
    EXPECT_NEAR(median(mhz), nvml->sm_clock_mhz, 0.03 * nvml->sm_clock_mhz);
  }
}

TEST(ClockProbe, AMeasuredPointCollectsItsProbes) {
  const auto device = kernels::open_device();
  if (!device) GTEST_SKIP() << kernels::cuda_unavailable_reason();
  const auto session = kernels::find_kernel("cublaslt_bf16").open(*device, {14336, 4096, 1}, 81);
  const auto gemm = session->prepare(8192, 82);
  profiler::MeasureOptions options;
  options.min_samples = options.max_samples = 20;
  const profiler::Measurement probed = profiler::measure(*device, *gemm, options);
  ASSERT_TRUE(probed.probed_clock);
  std::printf("  bf16 M=8192 N=14336 K=4096: %d samples of %.1f us, %d probes: lowest %.1f MHz, mean %.1f; NVML "
              "%.0f -> %.0f MHz\n",
              probed.samples, probed.median_us, probed.probed_clock->probes, probed.probed_clock->lowest_mhz,
              probed.probed_clock->mean_mhz,
              probed.clock_start ? probed.clock_start->sm_clock_mhz : 0.0,
              probed.clock_end ? probed.clock_end->sm_clock_mhz : 0.0);
  // One before the first sample, one after each millisecond of samples, one after the last.
  const double timed_us = probed.median_us * probed.samples;
  EXPECT_GE(probed.probed_clock->probes, int(timed_us / profiler::kProbeEveryUs) / 2 + 1);
  EXPECT_LE(probed.probed_clock->probes, probed.samples + 2);
  EXPECT_GT(probed.probed_clock->mean_mhz, 0.3 * device->info().max_sm_clock_mhz);
  EXPECT_LT(probed.probed_clock->mean_mhz, 1.05 * device->info().max_sm_clock_mhz);
  options.clock_probes = false;
  EXPECT_FALSE(profiler::measure(*device, *gemm, options).probed_clock);
}

}  // namespace
}  // namespace shapescope
