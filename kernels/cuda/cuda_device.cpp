#include "kernels/cuda/cuda_device.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/cublaslt_entries.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_memory_cache.hpp"
#include "kernels/cuda/empty_run.hpp"
#include "kernels/cuda/graph_sequence.hpp"
#include "kernels/cuda/cupti_range_counters.hpp"
#include "kernels/cuda/kernel_duration_timer.hpp"
#include "kernels/cuda/l2_flush.cuh"
#include "kernels/cuda/own_kernels.hpp"

namespace shapescope::kernels {

namespace cuda {
namespace {

// cudaDeviceProp::uuid as nvidia-smi prints it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string uuid_string(const cudaUUID_t& uuid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    const auto byte = static_cast<unsigned char>(uuid.bytes[i]);
    text += kHex[byte >> 4];
    text += kHex[byte & 15];
  }
  return text;
}

// Device-to-device copy rate in TB/s (bytes read + written), the median of 9 copies of 256 MiB: each GPU's
// own memory rate for its sidecar (GPUs of one model differ by a few percent). 0 when the memory is not free.
double measure_copy_tb_per_s(cudaStream_t stream) {
  constexpr std::size_t kBytes = std::size_t(256) << 20;
  constexpr int kCopies = 9;
  DeviceBuffer<uint8_t> source, target;
  try {
    source = DeviceBuffer<uint8_t>(kBytes);
    target = DeviceBuffer<uint8_t>(kBytes);
  } catch (const std::exception&) {
    cudaGetLastError();  // leave no error behind for later calls
    return 0;
  }
  cudaEvent_t start = nullptr, stop = nullptr;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaMemcpyAsync(target.data(), source.data(), kBytes, cudaMemcpyDeviceToDevice, stream));  // untimed
  std::vector<float> milliseconds(kCopies);
  for (float& elapsed : milliseconds) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    CUDA_CHECK(cudaMemcpyAsync(target.data(), source.data(), kBytes, cudaMemcpyDeviceToDevice, stream));
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(milliseconds.begin(), milliseconds.begin() + kCopies / 2, milliseconds.end());
  const double median_s = double(milliseconds[kCopies / 2]) * 1e-3;
  return median_s > 0 ? 2.0 * double(kBytes) / median_s / 1e12 : 0;
}

// How long a stream hold waits for its release: far beyond the enqueue of a held batch of samples (below a
// millisecond for a library call, a few for a Python callable), short enough that a hold nobody releases, or a
// launch queue full behind one, costs a point little.
constexpr std::uint64_t kStreamHoldTimeoutNs = 100'000'000;

std::string version_string(int version) {  // 13000 -> "13.0"
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

class EventTimer final : public Timer {
 public:
  explicit EventTimer(const CudaDevice& device) : device_(device) {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() override { CUDA_CHECK(cudaEventRecord(start_, device_.stream())); }
  void stop() override { CUDA_CHECK(cudaEventRecord(stop_, device_.stream())); }
  double elapsed_us() override {
    CUDA_CHECK(cudaEventSynchronize(stop_));
    float milliseconds = 0;
    CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start_, stop_));
    return double(milliseconds) * 1000.0;
  }

 private:
  const CudaDevice& device_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace

CudaDevice::CudaDevice(int ordinal) : ordinal_(ordinal) {
  CUDA_CHECK(cudaSetDevice(ordinal_));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  current_stream_ = stream_;

  cudaDeviceProp properties{};
  CUDA_CHECK(cudaGetDeviceProperties(&properties, ordinal_));
  char pci_bus_id[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(pci_bus_id, sizeof pci_bus_id, ordinal_));
  nvml_ = std::make_unique<NvmlLibrary>(pci_bus_id);

  int driver = 0, runtime = 0, clock_khz = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ordinal_));
  info_.name = properties.name;
  info_.backend = "cuda";
  info_.multiprocessors = properties.multiProcessorCount;
  info_.l2_bytes = std::size_t(properties.l2CacheSize);
  info_.memory_bytes = properties.totalGlobalMem;
  // The driver's own version string (e.g. 580.159.04) when NVML answers, else the CUDA API level.
  const std::string nvml_driver = nvml_->driver_version();
  info_.driver_version = nvml_driver.empty() ? "CUDA " + version_string(driver) : nvml_driver + " (CUDA " +
                                                                                    version_string(driver) + ")";
  info_.runtime_version = version_string(runtime);
  info_.max_sm_clock_mhz = nvml_->max_sm_clock_mhz().value_or(clock_khz / 1000.0);
  info_.uuid = uuid_string(properties.uuid);
  info_.copy_tb_per_s = measure_copy_tb_per_s(stream_);

  // Twice the L2, so that reading it leaves none of the operands cached.
  flush_buffer_ = DeviceBuffer<uint8_t>(2 * info_.l2_bytes);
  flush_sink_ = DeviceBuffer<uint32_t>(1);
  CUDA_CHECK(cudaMemsetAsync(flush_buffer_.data(), 0, flush_buffer_.bytes(), stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  clock_probes_ = std::make_unique<ClockProbes>(info_.max_sm_clock_mhz, stream_);
}

void CudaDevice::hold() {
  if (!stream_holder_) {
    stream_holder_ = std::make_unique<StreamHolder>(kStreamHoldTimeoutNs);
    // The hold and the flush are loaded now, not at a first launch behind a waiting hold: under lazy module
    // loading a kernel's first launch may wait for the device's running kernels, the hold included.
    stream_holder_->hold(current_stream_);
    stream_holder_->release();
    flush_cache();
    CUDA_CHECK(cudaStreamSynchronize(current_stream_));
  }
  stream_holder_->hold(current_stream_);
}

void CudaDevice::release() noexcept {
  if (stream_holder_) stream_holder_->release();
}

long long CudaDevice::timed_out_holds() const { return stream_holder_ ? stream_holder_->timed_out_holds() : 0; }

std::uint64_t CudaDevice::stream_hold_timeout_ns() const { return kStreamHoldTimeoutNs; }

CudaDevice::~CudaDevice() {
  cudaStreamSynchronize(stream_);
  cudaStreamDestroy(stream_);
  flush_buffer_ = {};
  flush_sink_ = {};
  clock_probes_.reset();
  stream_holder_.reset();
  free_cached_device_blocks(ordinal_);
}

std::unique_ptr<Timer> CudaDevice::make_timer() { return std::make_unique<EventTimer>(*this); }

void CudaDevice::flush_cache() {
  // Enqueued right before the timed region: it also keeps the GPU busy while the
  // host enqueues the start event and the launch, so no host gap is timed.
  read_to_evict_l2(flush_buffer_.data(), flush_buffer_.bytes(), flush_sink_.data(), current_stream_);
}

void CudaDevice::synchronize() { CUDA_CHECK(cudaStreamSynchronize(current_stream_)); }

std::size_t CudaDevice::free_memory_bytes() const {
  std::size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return free + cached_device_bytes(ordinal_);  // kept for reuse, given back when cudaMalloc runs out
}

std::optional<ClockSample> CudaDevice::sample_clock() const { return nvml_->sample(); }

std::unique_ptr<RunSequence> CudaDevice::capture(const std::vector<PreparedGemm*>& runs) {
  return std::make_unique<GraphSequence>(*this, runs);
}

std::unique_ptr<Timer> CudaDevice::make_kernel_timer() { return std::make_unique<KernelDurationTimer>(); }

std::unique_ptr<CounterSession> CudaDevice::counters() { return std::make_unique<CuptiRangeCounters>(ordinal_); }

std::unique_ptr<PreparedGemm> CudaDevice::empty_run() { return make_empty_run(*this); }

CudaDevice::StreamOverride::StreamOverride(CudaDevice& device, cudaStream_t stream)
    : device_(device), previous_(device.current_stream_) {
  device_.current_stream_ = stream;
}

CudaDevice::StreamOverride::~StreamOverride() { device_.current_stream_ = previous_; }

CudaDevice& as_cuda_device(Device& device) {
  auto* cuda_device = dynamic_cast<CudaDevice*>(&device);
  if (!cuda_device) throw std::logic_error("a CUDA kernel was opened on a " + to_string(device.kind()) + " device");
  return *cuda_device;
}

std::optional<std::string> missing_device_reason() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();  // leave no error behind for later calls
    return std::string("no usable CUDA device: ") + cudaGetErrorString(error);
  }
  if (count == 0) return std::string("no CUDA device present");
  return std::nullopt;
}

}  // namespace cuda

// Idempotent: registering a name again replaces its entry (kernel_registry.cpp).
void register_cuda_kernels() {
  cuda::register_cublaslt_bf16();
  cuda::register_cublaslt_fp8_blockscale();
  cuda::register_cublaslt_block_scaled();
  cuda::register_cublaslt_grouped_loops();
  cuda::register_own_cuda_kernels();
}

bool cuda_backend_compiled() { return true; }

std::unique_ptr<Device> make_cuda_device() {
  if (cuda::missing_device_reason()) return nullptr;
  return std::make_unique<cuda::CudaDevice>(0);
}

std::string cuda_unavailable_reason() { return cuda::missing_device_reason().value_or("a CUDA device is available"); }

int cuda_device_count() {
  if (cuda::missing_device_reason()) return 0;
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}

}  // namespace shapescope::kernels
