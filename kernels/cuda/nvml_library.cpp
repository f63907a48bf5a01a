#include "kernels/cuda/nvml_library.hpp"

#include <dlfcn.h>

namespace shapescope::kernels::cuda {
namespace {

// The few NVML declarations we use (nvml.h is not a build dependency).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;          // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;   // NVML_TEMPERATURE_GPU
constexpr int kNvmlPerfPolicyPower = 0;  // NVML_PERF_POLICY_POWER
struct NvmlViolationTime {
  unsigned long long reference_time_us;  // when the driver stamped the counter
  unsigned long long violation_time_ns;  // cumulative time the policy held the clock down
};

}  // namespace

struct NvmlLibrary::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*handle_by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;  // milliwatts
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  // Optional: older drivers lack them, and the power-cap columns stay empty.
  nvmlReturn_t (*violation_status)(nvmlDevice_t, int, NvmlViolationTime*) = nullptr;
  nvmlReturn_t (*enforced_power_limit)(nvmlDevice_t, unsigned*) = nullptr;  // milliwatts
  // Read when the device opens: the board's setting, not worth a driver call per point.
  double power_limit_w = 0;
};

namespace {
template <typename Function>
bool load(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}
}  // namespace

NvmlLibrary::NvmlLibrary(const std::string& pci_bus_id) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    reason_ = "libnvidia-ml.so.1 not found";
    return;
  }
  api_ = new Api;
  const bool complete = load(library_, "nvmlInit_v2", api_->init) && load(library_, "nvmlShutdown", api_->shutdown) &&
                        load(library_, "nvmlDeviceGetHandleByPciBusId_v2", api_->handle_by_pci_bus_id) &&
                        load(library_, "nvmlDeviceGetClockInfo", api_->clock_info) &&
                        load(library_, "nvmlDeviceGetMaxClockInfo", api_->max_clock_info) &&
                        load(library_, "nvmlDeviceGetTemperature", api_->temperature) &&
                        load(library_, "nvmlDeviceGetPowerUsage", api_->power_usage) &&
                        load(library_, "nvmlSystemGetDriverVersion", api_->driver_version);
  if (!complete) {
    reason_ = "libnvidia-ml.so.1 lacks a needed function";
    return;
  }
  load(library_, "nvmlDeviceGetViolationStatus", api_->violation_status);
  load(library_, "nvmlDeviceGetEnforcedPowerLimit", api_->enforced_power_limit);

  if (api_->init() != kNvmlSuccess) {
    reason_ = "nvmlInit_v2 failed";
    return;
  }
  nvmlDevice_t device = nullptr;
  // By PCI bus id rather than index: CUDA and NVML may number devices differently.
  if (api_->handle_by_pci_bus_id(pci_bus_id.c_str(), &device) != kNvmlSuccess) {
    reason_ = "NVML does not know the device at PCI " + pci_bus_id;
    api_->shutdown();
    return;
  }
  device_ = device;
  unsigned limit_mw = 0;
  if (api_->enforced_power_limit && api_->enforced_power_limit(device_, &limit_mw) == kNvmlSuccess)
    api_->power_limit_w = limit_mw / 1000.0;
}

NvmlLibrary::~NvmlLibrary() {
  if (device_) api_->shutdown();
  delete api_;
  if (library_) dlclose(library_);
}

std::optional<ClockSample> NvmlLibrary::sample() const {
  if (!available()) return std::nullopt;
  unsigned clock_mhz = 0, temperature_c = 0, power_mw = 0;
  if (api_->clock_info(device_, kNvmlClockSm, &clock_mhz) != kNvmlSuccess) return std::nullopt;
  ClockSample sample;
  sample.sm_clock_mhz = clock_mhz;
  // Temperature and power are optional extras: some virtual GPUs refuse them.
  if (api_->temperature(device_, kNvmlTemperatureGpu, &temperature_c) == kNvmlSuccess)
    sample.temperature_c = temperature_c;
  if (api_->power_usage(device_, &power_mw) == kNvmlSuccess) sample.power_w = power_mw / 1000.0;
  return sample;
}

// The power policy's counter only, through nvmlDeviceGetViolationStatus, which answers up to date (0.4-0.7 ms a
// call on an H100, driver 580). The same counter as a field value (NVML_FI_DEV_PERF_POLICY_POWER) costs ~1.5 µs
// but is refreshed about every 100 ms, in steps of that size: shares of 0 or 700% for points of 18 ms. The
// thermal policy's counter costs as much again, and the power-capped H100 never counted thermal time.
std::optional<ThrottleReading> NvmlLibrary::throttle_reading() const {
  if (!available() || !api_->violation_status) return std::nullopt;
  NvmlViolationTime time{};
  if (api_->violation_status(device_, kNvmlPerfPolicyPower, &time) != kNvmlSuccess) return std::nullopt;
  ThrottleReading reading;
  reading.power = PolicyHeldTime{double(time.reference_time_us) / 1e6, double(time.violation_time_ns) / 1e9};
  reading.power_limit_w = api_->power_limit_w;
  return reading;
}

std::optional<double> NvmlLibrary::max_sm_clock_mhz() const {
  unsigned clock_mhz = 0;
  if (!available() || api_->max_clock_info(device_, kNvmlClockSm, &clock_mhz) != kNvmlSuccess) return std::nullopt;
  return double(clock_mhz);
}

std::string NvmlLibrary::driver_version() const {
  char version[96] = {};
  if (!available() || api_->driver_version(version, sizeof version) != kNvmlSuccess) return {};
  return version;
}

}  // namespace shapescope::kernels::cuda
