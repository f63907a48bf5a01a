// The HIP device: one stream for everything timed, hipEvent timers, a last-level-cache flush
// by a read pass over a buffer larger than every cache, ROCm SMI clocks, HIP-graph sequences.
// The measurement core is the same as on CUDA; only this backend changes.
#pragma once

#include <hip/hip_runtime.h>

#include <memory>
#include <string>

#include "kernels/hip/hip_buffer.hpp"
#include "kernels/hip/rocm_smi_clocks.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels::rocm {

class HipDevice final : public Device {
 public:
  explicit HipDevice(int ordinal);
  ~HipDevice() override;
  HipDevice(const HipDevice&) = delete;
  HipDevice& operator=(const HipDevice&) = delete;

  BackendKind kind() const override { return BackendKind::hip; }
  DeviceInfo info() const override { return info_; }
  std::unique_ptr<Timer> make_timer() override;
  void flush_cache() override;
  void synchronize() override;
  std::size_t free_memory_bytes() const override;
  std::optional<ClockSample> sample_clock() const override { return clocks_->sample(); }
  std::unique_ptr<RunSequence> capture(const std::vector<PreparedGemm*>& runs) override;
  std::unique_ptr<Timer> make_kernel_timer() override;
  std::unique_ptr<PreparedGemm> empty_run() override;

  hipStream_t stream() const { return stream_; }
  // The architecture the runtime reports, e.g. "gfx942:sramecc+:xnack-" (kernels pick their path by it).
  const std::string& architecture() const { return architecture_; }

 private:
  hipStream_t stream_ = nullptr;
  DeviceInfo info_;
  std::string architecture_;
  HipBuffer<uint8_t> flush_buffer_;
  HipBuffer<uint32_t> flush_sink_;
  std::unique_ptr<RocmSmiClocks> clocks_;
};

// The HipDevice behind a Device& (kernels of the HIP backend need its stream).
HipDevice& as_hip_device(Device& device);

}  // namespace shapescope::kernels::rocm
