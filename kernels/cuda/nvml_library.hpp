// NVML, loaded at run time with dlopen so the binaries need no NVML at link time
// and still run (without clock readings) where the driver's library is absent.
#pragma once

#include <optional>
#include <string>

#include "kernels/kernel.hpp"
#include "kernels/throttle_accounting.hpp"

namespace shapescope::kernels::cuda {

class NvmlLibrary {
 public:
  // Opens libnvidia-ml.so.1 and the device of that PCI bus id; unavailable() says why when it cannot.
  explicit NvmlLibrary(const std::string& pci_bus_id);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  bool available() const { return device_ != nullptr; }
  const std::string& unavailable_reason() const { return reason_; }
  std::optional<ClockSample> sample() const;
  // NVML's power-policy violation counter and the power limit read at open; nothing where the
  // driver lacks them. 0.4-0.7 ms a call on an H100 (nvml_library.cpp says why no cheaper one).
  std::optional<ThrottleReading> throttle_reading() const;
  std::optional<double> max_sm_clock_mhz() const;
  std::string driver_version() const;

 private:
  struct Api;
  void* library_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t
  Api* api_ = nullptr;
  std::string reason_;
};

}  // namespace shapescope::kernels::cuda
