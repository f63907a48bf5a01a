#include "kernels/copy_bandwidth.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#if SHAPESCOPE_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace shapescope::kernels {

namespace {

constexpr std::size_t kGpuCopyBytes = std::size_t(1) << 30;
constexpr std::size_t kCpuCopyBytes = std::size_t(64) << 20;
constexpr int kWarmUpCopies = 3;
constexpr int kTimedCopies = 15;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

#if SHAPESCOPE_HAVE_CUDA
// On the legacy stream, with its own events: nothing else of the device is involved.
double gpu_copy_bandwidth(std::size_t bytes) {
  void *source = nullptr, *destination = nullptr;
  if (cudaMalloc(&source, bytes) != cudaSuccess || cudaMalloc(&destination, bytes) != cudaSuccess) {
    cudaFree(source);
    cudaGetLastError();
    throw std::runtime_error("copy bandwidth: cannot allocate " + std::to_string(2 * bytes >> 20) + " MiB");
  }
  cudaMemset(source, 1, bytes);
  cudaEvent_t start = nullptr, stop = nullptr;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<double> us;
  for (int i = 0; i < kWarmUpCopies + kTimedCopies; ++i) {
    cudaEventRecord(start);
    cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (i >= kWarmUpCopies) us.push_back(double(ms) * 1000.0);
  }
  const cudaError_t error = cudaGetLastError();
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(source);
  cudaFree(destination);
  if (error != cudaSuccess) throw std::runtime_error(std::string("copy bandwidth: ") + cudaGetErrorString(error));
  return 2.0 * double(bytes) / median(us);
}
#endif

double cpu_copy_bandwidth(Device& device, std::size_t bytes) {
  std::vector<char> source(bytes, 1), destination(bytes, 0);
  auto timer = device.make_timer();
  std::vector<double> us;
  for (int i = 0; i < kWarmUpCopies + kTimedCopies; ++i) {
    timer->start();
    std::memcpy(destination.data(), source.data(), bytes);
    timer->stop();
    const double elapsed = timer->elapsed_us();
    if (i >= kWarmUpCopies) us.push_back(elapsed);
  }
  return 2.0 * double(bytes) / median(us);
}

}  // namespace

double measure_copy_bandwidth(Device& device) {
#if SHAPESCOPE_HAVE_CUDA
  if (device.kind() == BackendKind::cuda) return gpu_copy_bandwidth(kGpuCopyBytes);
#endif
  if (device.kind() == BackendKind::hip) return 0;  // not measured on AMD GPUs yet: unknown
  return cpu_copy_bandwidth(device, kCpuCopyBytes);
}

}  // namespace shapescope::kernels
