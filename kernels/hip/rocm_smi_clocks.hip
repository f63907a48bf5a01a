#include "kernels/hip/rocm_smi_clocks.hpp"

#if SHAPESCOPE_HAVE_ROCM_SMI
#include <rocm_smi/rocm_smi.h>
#endif

#include <cstdint>

namespace shapescope::kernels::rocm {

#if SHAPESCOPE_HAVE_ROCM_SMI

RocmSmiClocks::RocmSmiClocks(int pci_domain, int pci_bus, int pci_device) {
  if (rsmi_init(0) != RSMI_STATUS_SUCCESS) {
    unavailable_reason_ = "rsmi_init failed (no amdgpu driver?)";
    return;
  }
  initialized_ = true;
  uint32_t count = 0;
  if (rsmi_num_monitor_devices(&count) != RSMI_STATUS_SUCCESS) count = 0;
  for (uint32_t index = 0; index < count; ++index) {
    uint64_t bdf = 0;  // domain << 32 | bus << 8 | device << 3 | function
    if (rsmi_dev_pci_id_get(index, &bdf) != RSMI_STATUS_SUCCESS) continue;
    if (int(bdf >> 32) == pci_domain && int((bdf >> 8) & 0xFF) == pci_bus && int((bdf >> 3) & 0x1F) == pci_device) {
      index_ = index;
      return;
    }
  }
  unavailable_reason_ = "no ROCm SMI device at the HIP device's PCI address";
}

RocmSmiClocks::~RocmSmiClocks() {
  if (initialized_) rsmi_shut_down();
}

std::optional<ClockSample> RocmSmiClocks::sample() const {
  if (!unavailable_reason_.empty()) return std::nullopt;
  rsmi_frequencies_t frequencies{};
  if (rsmi_dev_gpu_clk_freq_get(index_, RSMI_CLK_TYPE_SYS, &frequencies) != RSMI_STATUS_SUCCESS ||
      frequencies.current >= frequencies.num_supported)
    return std::nullopt;
  ClockSample sample;
  sample.sm_clock_mhz = double(frequencies.frequency[frequencies.current]) / 1e6;  // Hz
  int64_t millidegrees = 0;
  if (rsmi_dev_temp_metric_get(index_, RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_CURRENT, &millidegrees) == RSMI_STATUS_SUCCESS)
    sample.temperature_c = double(millidegrees) / 1000.0;
  uint64_t microwatts = 0;
  if (rsmi_dev_power_ave_get(index_, 0, &microwatts) == RSMI_STATUS_SUCCESS) sample.power_w = double(microwatts) / 1e6;
  return sample;
}

#else

RocmSmiClocks::RocmSmiClocks(int, int, int) : unavailable_reason_("built without the ROCm SMI library") {}
RocmSmiClocks::~RocmSmiClocks() = default;
std::optional<ClockSample> RocmSmiClocks::sample() const { return std::nullopt; }

#endif

}  // namespace shapescope::kernels::rocm
