// The CUDA backend on a real GPU: the device's timer, flush, clocks and graph
// batches; cuBLASLt bf16 and block-scaled FP8 against the float64 reference on
// the DeepSeek-V3 TP8 shapes; the scale-layout rule for K=2304. Each test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/model_catalog.hpp"
#include "common/shape_axes.hpp"
#include "kernels/cuda/cublaslt_entries.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_device.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/kernel.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace shapescope::kernels {
namespace {

constexpr double kThreshold = 1e-2;  // the profile's numerical_fail threshold

struct WeightCase {
  int64_t n, k;
};
// DeepSeek-V3 TP8 from the shipped catalog, found as profile finds it (7168x2304 needs padded
// weight scales).
std::vector<WeightCase> deepseek_tp8() {
  std::vector<WeightCase> shapes;
  for (const GemmProblem& problem : distinct_shapes(ModelCatalog::load_default().problems("deepseek_v3", "all", 8)))
    if (problem.batch_count == 1) shapes.push_back({problem.n, problem.k});
  return shapes;
}
const int64_t kMs[] = {1, 3, 4, 64, 127, 129, 1024};

GemmShape gemm_shape(int64_t m, const WeightCase& weights) { return GemmShape{m, weights.n, weights.k, 1}; }

// Fresh data per check: the weight seed per shape, the activation seed per point.
// `refused(m)`: whether the library is expected to refuse this M (the check then proves it does).
void check_entry_on_deepseek_shapes(const std::string& kernel_name, Device& device,
                                    const std::function<bool(int64_t)>& refused) {
  const KernelEntry& entry = find_kernel(kernel_name);
  uint64_t seed = 0x5eed0000 + std::hash<std::string>{}(kernel_name) % 1000;
  for (const WeightCase& shape : deepseek_tp8()) {
    const auto session = entry.open(device, WeightShape{shape.n, shape.k, 1}, ++seed);
    for (const int64_t m : kMs) {
      SCOPED_TRACE(kernel_name + " M=" + std::to_string(m) + " N=" + std::to_string(shape.n) +
                   " K=" + std::to_string(shape.k));
      std::unique_ptr<PreparedGemm> gemm;
      try {
        gemm = session->prepare(m, ++seed);
      } catch (const UnsupportedShape& refusal) {
        EXPECT_TRUE(refused(m)) << refusal.what();
        std::printf("  %s N=%ld K=%ld M=%ld: unsupported (%s)\n", kernel_name.c_str(), long(shape.n), long(shape.k),
                    long(m), refusal.what());
        EXPECT_TRUE(entry.unsupported_reason(gemm_shape(m, shape)).has_value());  // the sweep says so before trying
        continue;
      }
      EXPECT_FALSE(refused(m)) << "expected a refusal";
      EXPECT_FALSE(entry.unsupported_reason(gemm_shape(m, shape)).has_value());
      const CheckResult result = gemm->check();
      EXPECT_EQ(result.unwritten, 0);
      EXPECT_LE(result.rel_err, kThreshold);
      EXPECT_GT(result.elements_checked, 0);
      EXPECT_TRUE(result.passed(kThreshold));
      std::printf("  %s N=%ld K=%ld M=%ld: rel_err %.2e over %ld elements, %s\n", kernel_name.c_str(), long(shape.n),
                  long(shape.k), long(m), result.rel_err, long(result.elements_checked), gemm->launch_name().c_str());
    }
  }
}

TEST(CudaBackend, DeviceReportsItself) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const DeviceInfo info = device->info();
  std::printf("  %s: %d SMs, L2 %zu MB, %zu GB, driver %s, runtime %s, max SM clock %.0f MHz\n", info.name.c_str(),
              info.multiprocessors, info.l2_bytes >> 20, info.memory_bytes >> 30, info.driver_version.c_str(),
              info.runtime_version.c_str(), info.max_sm_clock_mhz);
  EXPECT_EQ(info.backend, "cuda");
  EXPECT_GT(info.multiprocessors, 0);
  EXPECT_GT(info.l2_bytes, 0u);
  EXPECT_GT(device->free_memory_bytes(), 0u);
  EXPECT_LE(device->free_memory_bytes(), info.memory_bytes);
  // The UUID as nvidia-smi prints it (GPU-8-4-4-4-12 hex digits): the per-GPU lock and the shards' sidecars use it.
  std::printf("  uuid %s, %d GPU(s) visible\n", info.uuid.c_str(), cuda_device_count());
  ASSERT_EQ(info.uuid.size(), 40u) << info.uuid;
  EXPECT_EQ(info.uuid.rfind("GPU-", 0), 0u) << info.uuid;
  for (std::size_t dash : {12u, 17u, 22u, 27u}) EXPECT_EQ(info.uuid[dash], '-') << info.uuid;
  EXPECT_GE(cuda_device_count(), 1);
  // Its own copy rate: HBM moves 1.5 to 10 TB/s (read + write) on every GPU shapescope targets.
  std::printf("  device-to-device copy %.2f TB/s\n", info.copy_tb_per_s);
  EXPECT_GT(info.copy_tb_per_s, 1.5);
  EXPECT_LT(info.copy_tb_per_s, 10);
}

TEST(CudaBackend, ClockSamplesComeFromNvml) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const auto sample = device->sample_clock();
  ASSERT_TRUE(sample.has_value()) << "NVML gave no SM clock";
  std::printf("  SM %.0f MHz, %.0f C, %.1f W\n", sample->sm_clock_mhz, sample->temperature_c, sample->power_w);
  EXPECT_GT(sample->sm_clock_mhz, 0);
  EXPECT_LE(sample->sm_clock_mhz, device->info().max_sm_clock_mhz + 1);
}

// A 2 GiB device copy timed by the device's timer must land at a plausible HBM bandwidth.
TEST(CudaBackend, TimerMeasuresACopyAtHbmBandwidth) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  auto& cuda_device = cuda::as_cuda_device(*device);
  const std::size_t bytes = std::size_t(1) << 31;
  cuda::DeviceBuffer<uint8_t> source(bytes), target(bytes);
  CUDA_CHECK(cudaMemsetAsync(source.data(), 1, bytes, cuda_device.stream()));
  const auto timer = device->make_timer();
  double best_us = 1e30;
  for (int i = 0; i < 5; ++i) {
    timer->start();
    CUDA_CHECK(cudaMemcpyAsync(target.data(), source.data(), bytes, cudaMemcpyDeviceToDevice, cuda_device.stream()));
    timer->stop();
    best_us = std::min(best_us, timer->elapsed_us());
  }
  const double tb_per_s = 2.0 * double(bytes) / (best_us * 1e-6) / 1e12;  // read + write
  std::printf("  device copy: %.2f TB/s (read + write, 2 GiB)\n", tb_per_s);
  EXPECT_GT(tb_per_s, 0.5);
  EXPECT_LT(tb_per_s, 10.0);
}

// A graph of many launches gives the per-launch time of back-to-back runs.
TEST(CudaBackend, CapturedSequencesTimeShortKernels) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const auto session = find_kernel("cublaslt_bf16").open(*device, WeightShape{2048, 1024, 1}, 9);
  const auto gemm = session->prepare(16, 10);
  double per_launch_us = 0;
  {
    const auto sequence = device->capture(std::vector<PreparedGemm*>(100, gemm.get()));
    sequence->replay_us();  // warm up
    per_launch_us = sequence->replay_us() / 100;
  }
  const auto timer = device->make_timer();
  timer->start();
  gemm->run();
  timer->stop();
  const double single_us = timer->elapsed_us();
  std::printf("  bf16 M=16 N=2048 K=1024: %.2f us per launch in a graph, %.2f us alone\n", per_launch_us, single_us);
  EXPECT_GT(per_launch_us, 0.5);
  EXPECT_LT(per_launch_us, single_us * 1.5);
  EXPECT_TRUE(gemm->check().passed(kThreshold));  // the captured graph left the gemm usable
}

// Kernel timing: CUPTI's durations of what a run launched, never more than the events
// around it, and naming the kernels; an empty kernel costs about a microsecond.
TEST(CudaBackend, KernelTimerReportsDurationsAndNamesOfTheRunsKernels) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const auto session = find_kernel("cublaslt_fp8_blockscale").open(*device, WeightShape{7168, 2304, 1}, 11);
  const auto gemm = session->prepare(64, 12);
  gemm->run();
  device->synchronize();
  std::unique_ptr<Timer> kernel_timer;
  try {
    kernel_timer = device->make_kernel_timer();
  } catch (const std::exception& error) {
    GTEST_SKIP() << error.what();
  }
  const auto event_timer = device->make_timer();
  double kernel_us = 1e30, event_us = 1e30;
  for (int i = 0; i < 5; ++i) {
    device->flush_cache();
    kernel_timer->start();
    gemm->run();
    kernel_timer->stop();
    kernel_us = std::min(kernel_us, kernel_timer->elapsed_us());
    device->flush_cache();
    event_timer->start();
    gemm->run();
    event_timer->stop();
    event_us = std::min(event_us, event_timer->elapsed_us());
  }
  std::printf("  fp8 cuBLASLt M=64 N=7168 K=2304: kernel %.2f us, events %.2f us; launched: %s\n", kernel_us, event_us,
              kernel_timer->launched().c_str());
  EXPECT_GT(kernel_us, 0.5);
  EXPECT_LT(kernel_us, event_us);
  EXPECT_FALSE(kernel_timer->launched().empty());
  EXPECT_EQ(kernel_timer->launched().find("read_buffer"), std::string::npos);  // the L2 flush is not the run's

  const auto empty = device->empty_run();
  kernel_timer->start();
  empty->run();
  kernel_timer->stop();
  const double empty_us = kernel_timer->elapsed_us();
  EXPECT_NE(kernel_timer->launched().find("empty_kernel"), std::string::npos) << kernel_timer->launched();
  EXPECT_LT(empty_us, 5.0);
}

TEST(CudaBackend, CublasLtBf16MatchesReferenceOnDeepSeekShapes) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  check_entry_on_deepseek_shapes("cublaslt_bf16", *device, [](int64_t) { return false; });
}

TEST(CudaBackend, CublasLtBf16BatchedMatchesReference) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const auto session = find_kernel("cublaslt_bf16").open(*device, WeightShape{512, 128, 16}, 21);  // absorbed MLA
  for (const int64_t m : {1, 7, 64}) {
    const CheckResult result = session->prepare(m, 22 + m)->check();
    EXPECT_TRUE(result.passed(kThreshold)) << "M=" << m << " rel_err " << result.rel_err;
  }
}

TEST(CudaBackend, CublasLtFp8BlockscaleMatchesReferenceOnDeepSeekShapes) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  // M % 4 != 0 is refused by cuBLASLt (M=1, 3, 127, 129 here); the test fails if that rule changes.
  check_entry_on_deepseek_shapes("cublaslt_fp8_blockscale", *device, [](int64_t m) { return m % 4 != 0; });
}

// The M rule on more values, straight from the library (prepare), not from our static reason.
TEST(CudaBackend, CublasLtFp8BlockscaleNeedsMMultipleOfFour) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const auto session = cuda::open_cublaslt_fp8_blockscale(*device, WeightShape{7168, 2304, 1}, 51);
  for (const int64_t m : {2, 5, 6, 8, 12, 126, 128, 130, 132, 4097, 4100}) {
    bool supported = true;
    try {
      session->prepare(m, 52 + m);
    } catch (const UnsupportedShape&) {
      supported = false;
    }
    EXPECT_EQ(supported, m % 4 == 0) << "M=" << m;
  }
}

// The layout rule, proven against the library: unpadded 128x128 scales are wrong
// exactly when ceil(K/128) is not a multiple of 4 (K=2304: 18 blocks), right otherwise.
TEST(CudaBackend, Fp8WeightScaleRowsMustBePaddedToFourKBlocks) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  auto rel_err = [&](int64_t n, int64_t k, bool padded) {
    const auto session = cuda::open_cublaslt_fp8_blockscale(*device, WeightShape{n, k, 1}, 31, padded);
    return session->prepare(256, 32)->check().rel_err;
  };
  const double padded_2304 = rel_err(7168, 2304, true), unpadded_2304 = rel_err(7168, 2304, false);
  const double unpadded_2048 = rel_err(7168, 2048, false);
  std::printf("  K=2304 padded %.2e, unpadded %.2e; K=2048 unpadded %.2e\n", padded_2304, unpadded_2304,
              unpadded_2048);
  EXPECT_LE(padded_2304, kThreshold);
  EXPECT_GT(unpadded_2304, 10 * kThreshold);
  EXPECT_LE(unpadded_2048, kThreshold);  // 16 K-blocks: padding changes nothing
}

TEST(CudaBackend, Fp8BlockscaleRefusesBatchesAndMisalignedK) {
  register_cuda_kernels();
  const KernelEntry& entry = find_kernel("cublaslt_fp8_blockscale");
  EXPECT_TRUE(entry.unsupported_reason(GemmShape{16, 512, 128, 16}).has_value());
  EXPECT_TRUE(entry.unsupported_reason(GemmShape{16, 512, 100, 1}).has_value());
  EXPECT_FALSE(entry.unsupported_reason(GemmShape{16, 7168, 2304, 1}).has_value());
}

// Sanity of the whole stack: a large bf16 GEMM reaches a Hopper-class rate.
TEST(CudaBackend, LargeBf16GemmReachesTensorCoreRate) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const auto session = find_kernel("cublaslt_bf16").open(*device, WeightShape{8192, 8192, 1}, 41);
  const auto gemm = session->prepare(8192, 42);
  const auto sequence = device->capture(std::vector<PreparedGemm*>(10, gemm.get()));
  const double per_run_us = (sequence->replay_us(), sequence->replay_us() / 10);
  const double tflops = 2.0 * 8192.0 * 8192.0 * 8192.0 / (per_run_us * 1e-6) / 1e12;
  std::printf("  bf16 8192^3: %.1f us, %.0f TFLOP/s (%s)\n", per_run_us, tflops, gemm->launch_name().c_str());
  EXPECT_GT(tflops, 300);
}

}  // namespace
}  // namespace shapescope::kernels
