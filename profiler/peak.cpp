#include "profiler/peak.hpp"

#include <fmt/format.h>

#include "common/device_peaks.hpp"
#include "common/user_error.hpp"
#include "kernels/cpu/cpu_kernels.hpp"
#include "profiler/measure.hpp"

namespace shapescope::profiler {

namespace {

// Large enough to reach the tensor-core plateau of any GPU we know.
constexpr int64_t kPeakExtent = 8192;
constexpr uint64_t kPeakSeed = 0x5EEDull;

Peak measure_through_registry(kernels::Device& device, const kernels::KernelEntry& kernel) {
  const kernels::GemmShape shape{kPeakExtent, kPeakExtent, kPeakExtent, 1};
  auto session = kernel.open(device, {shape.n, shape.k, 1}, kPeakSeed);
  auto gemm = session->prepare(shape.m, kPeakSeed + 1);
  MeasureOptions options;
  options.hot = true;  // the achievable compute rate, not memory traffic
  const Measurement m = measure(device, *gemm, options);
  return {shape.flops() / m.median_us / 1e6,
          fmt::format("measured: {} at M=N=K={}, hot median", kernel.name, kPeakExtent)};
}

}  // namespace

const Peak& PeakResolver::peak_for(kernels::Device& device, const kernels::KernelEntry& kernel) {
  // Every CPU kernel multiplies in fp32, so one sgemm peak serves all their dtypes.
  const std::string key = device.kind() == kernels::BackendKind::cpu ? "cpu sgemm" : kernel.dtype;
  auto it = cache_.find(key);
  if (it == cache_.end()) it = cache_.emplace(key, resolve(device, kernel)).first;
  return it->second;
}

Peak PeakResolver::resolve(kernels::Device& device, const kernels::KernelEntry& kernel) const {
  if (override_tflops_ > 0) return {override_tflops_, "--peak-tflops"};
  const kernels::DeviceInfo info = device.info();
  if (device.kind() == kernels::BackendKind::cpu) {
    // No datasheet gives a CPU's sgemm rate.
    return {kernels::cpu::measure_sgemm_peak_tflops(info.multiprocessors),
            fmt::format("measured: Eigen sgemm 1024^3 on {} threads, best run over 3 s", info.multiprocessors)};
  }
  if (mode_ == PeakMode::measured) return measure_through_registry(device, kernel);
  const auto datasheet = peak_tflops(info.name, kernel.dtype);
  if (!datasheet || *datasheet <= 0) {
    throw UserError(fmt::format("no datasheet {} peak for device '{}': pass --peak-tflops <TFLOP/s> or --peak measured",
                                kernel.dtype, info.name));
  }
  return {*datasheet, fmt::format("datasheet: {} {}", info.name, kernel.dtype)};
}

}  // namespace shapescope::profiler
