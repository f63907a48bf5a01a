// The CUDA device: one stream for everything timed, cudaEvent timers, an L2
// flush by a read pass over a buffer larger than L2 (l2_flush.cuh), NVML clocks and throttle accounting, SM clock
// probes between samples (clock_probe.hpp), a stream hold while timed samples are enqueued (stream_hold.hpp),
// CUDA-graph sequences, CUPTI kernel durations and CUPTI hardware counters.
//
// CUDA kernels read stream() on every run() (never cache it): verify-plans
// redirects runs to other streams with a StreamOverride to run sub-GEMMs concurrently.
#pragma once

#include <cuda_runtime.h>

#include <memory>

#include "kernels/cuda/clock_probe.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/nvml_library.hpp"
#include "kernels/cuda/stream_hold.hpp"
#include "kernels/kernel.hpp"
#include "kernels/sm_clock_probe.hpp"
#include "kernels/stream_hold.hpp"

namespace shapescope::kernels::cuda {

class CudaDevice final : public Device, public ThrottleAccountingSource, public SmClockProbe, public StreamHold {
 public:
  explicit CudaDevice(int ordinal);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  BackendKind kind() const override { return BackendKind::cuda; }
  DeviceInfo info() const override { return info_; }
  std::unique_ptr<Timer> make_timer() override;
  void flush_cache() override;
  void synchronize() override;
  std::size_t free_memory_bytes() const override;
  std::optional<ClockSample> sample_clock() const override;
  std::optional<ThrottleReading> read_throttle_accounting() const override { return nvml_->throttle_reading(); }
  bool enqueue_probe() override { return clock_probes_->enqueue(current_stream_); }
  std::vector<double> collect_probes() override { return clock_probes_->collect(current_stream_); }
  void hold() override;
  void release() noexcept override;
  long long timed_out_holds() const override;
  std::unique_ptr<RunSequence> capture(const std::vector<PreparedGemm*>& runs) override;
  std::unique_ptr<Timer> make_kernel_timer() override;
  std::unique_ptr<PreparedGemm> empty_run() override;
  // CUPTI's range profiler (cupti_range_counters.hpp).
  std::unique_ptr<CounterSession> counters() override;
  // Our kernels read this at every launch (and name it in launch_name()).
  void set_programmatic_launch(bool on) override { programmatic_launch_ = on; }
  bool programmatic_launch() const { return programmatic_launch_; }

  int ordinal() const { return ordinal_; }
  const ClockProbes& clock_probes() const { return *clock_probes_; }
  std::uint64_t stream_hold_timeout_ns() const;
  // The stream that runs enqueue on right now (the device's own, unless overridden).
  cudaStream_t stream() const { return current_stream_; }

  // While alive, runs enqueue on `stream` instead of the device's own stream.
  class StreamOverride {
   public:
    StreamOverride(CudaDevice& device, cudaStream_t stream);
    ~StreamOverride();
    StreamOverride(const StreamOverride&) = delete;
    StreamOverride& operator=(const StreamOverride&) = delete;

   private:
    CudaDevice& device_;
    cudaStream_t previous_;
  };

 private:
  int ordinal_;
  cudaStream_t stream_ = nullptr;
  cudaStream_t current_stream_ = nullptr;
  DeviceInfo info_;
  DeviceBuffer<uint8_t> flush_buffer_;
  DeviceBuffer<uint32_t> flush_sink_;
  std::unique_ptr<NvmlLibrary> nvml_;
  std::unique_ptr<ClockProbes> clock_probes_;
  std::unique_ptr<StreamHolder> stream_holder_;  // made at the first hold(): a sweep that never holds has none
  bool programmatic_launch_ = false;
};

// Why no CUDA device can be opened here, or nothing when one can.
std::optional<std::string> missing_device_reason();

// The CudaDevice behind a Device& (kernels of the CUDA backend need its stream).
CudaDevice& as_cuda_device(Device& device);

}  // namespace shapescope::kernels::cuda
