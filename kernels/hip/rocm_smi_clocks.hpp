// The GPU's clock, temperature and power through the ROCm SMI library (NVML's counterpart),
// when shapescope was built with it (SHAPESCOPE_HAVE_ROCM_SMI); else no samples.
#pragma once

#include <optional>
#include <string>

#include "kernels/kernel.hpp"

namespace shapescope::kernels::rocm {

class RocmSmiClocks {
 public:
  // `pci_domain/bus/device`: the HIP device's PCI address, to find its ROCm SMI index (the two
  // number devices differently under HIP_VISIBLE_DEVICES).
  RocmSmiClocks(int pci_domain, int pci_bus, int pci_device);
  ~RocmSmiClocks();
  RocmSmiClocks(const RocmSmiClocks&) = delete;
  RocmSmiClocks& operator=(const RocmSmiClocks&) = delete;

  std::optional<ClockSample> sample() const;
  // Why there are no samples ("built without ROCm SMI", "no ROCm SMI device at PCI ..."), or "".
  const std::string& unavailable_reason() const { return unavailable_reason_; }

 private:
#if SHAPESCOPE_HAVE_ROCM_SMI
  bool initialized_ = false;
  unsigned index_ = 0;
#endif
  std::string unavailable_reason_;
};

}  // namespace shapescope::kernels::rocm
