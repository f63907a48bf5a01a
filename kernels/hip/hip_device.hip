#include "kernels/hip/hip_device.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/hip/hip_check.hpp"

namespace shapescope::kernels::rocm {
namespace {

// MI300X's 256 MB Infinity Cache sits behind the L2 and hipDeviceProp_t does not report it:
// the flush reads at least this much whatever the L2 size.
constexpr std::size_t kMinFlushBytes = std::size_t(512) << 20;

// Reads the buffer as 16-byte words; `sink` is written only for an impossible sum, so the
// reads stay. A read leaves clean lines behind (a memset would leave dirty ones that the
// next, timed, kernel pays to write back).
__global__ void read_to_evict_kernel(const uint4* words, std::size_t count, uint32_t* sink) {
  uint32_t sum = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 word = words[i];
    sum += word.x ^ word.y ^ word.z ^ word.w;
  }
  if (sum == 0x9E3779B9u) *sink = sum;
}

__global__ void empty_kernel() {}

class EventTimer final : public Timer {
 public:
  explicit EventTimer(hipStream_t stream) : stream_(stream) {
    HIP_CHECK(hipEventCreate(&start_));
    HIP_CHECK(hipEventCreate(&stop_));
  }
  ~EventTimer() override {
    (void)hipEventDestroy(start_);
    (void)hipEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start() override { HIP_CHECK(hipEventRecord(start_, stream_)); }
  void stop() override { HIP_CHECK(hipEventRecord(stop_, stream_)); }
  double elapsed_us() override {
    HIP_CHECK(hipEventSynchronize(stop_));
    float milliseconds = 0;
    HIP_CHECK(hipEventElapsedTime(&milliseconds, start_, stop_));
    return double(milliseconds) * 1000.0;
  }

 private:
  hipStream_t stream_;
  hipEvent_t start_ = nullptr;
  hipEvent_t stop_ = nullptr;
};

class GraphSequence final : public RunSequence {
 public:
  GraphSequence(hipStream_t stream, const std::vector<PreparedGemm*>& runs) : stream_(stream) {
    hipGraph_t graph = nullptr;
    HIP_CHECK(hipStreamBeginCapture(stream_, hipStreamCaptureModeThreadLocal));
    try {
      for (PreparedGemm* run : runs) run->run();
    } catch (...) {
      (void)hipStreamEndCapture(stream_, &graph);
      if (graph) (void)hipGraphDestroy(graph);
      throw;
    }
    HIP_CHECK(hipStreamEndCapture(stream_, &graph));
    const hipError_t instantiated = hipGraphInstantiate(&graph_, graph, nullptr, nullptr, 0);
    (void)hipGraphDestroy(graph);
    HIP_CHECK(instantiated);
    HIP_CHECK(hipEventCreate(&start_));
    HIP_CHECK(hipEventCreate(&stop_));
  }
  ~GraphSequence() override {
    (void)hipStreamSynchronize(stream_);
    if (start_) (void)hipEventDestroy(start_);
    if (stop_) (void)hipEventDestroy(stop_);
    if (graph_) (void)hipGraphExecDestroy(graph_);
  }
  GraphSequence(const GraphSequence&) = delete;
  GraphSequence& operator=(const GraphSequence&) = delete;

  double replay_us() override {
    HIP_CHECK(hipEventRecord(start_, stream_));
    HIP_CHECK(hipGraphLaunch(graph_, stream_));
    HIP_CHECK(hipEventRecord(stop_, stream_));
    HIP_CHECK(hipEventSynchronize(stop_));
    float milliseconds = 0;
    HIP_CHECK(hipEventElapsedTime(&milliseconds, start_, stop_));
    return double(milliseconds) * 1000.0;
  }

 private:
  hipStream_t stream_;
  hipGraphExec_t graph_ = nullptr;
  hipEvent_t start_ = nullptr;
  hipEvent_t stop_ = nullptr;
};

class EmptyRun final : public PreparedGemm {
 public:
  explicit EmptyRun(hipStream_t stream) : stream_(stream) {}
  void run() override {
    empty_kernel<<<1, 64, 0, stream_>>>();
    HIP_CHECK(hipGetLastError());
  }
  CheckResult check() override { return {}; }
  std::string launch_name() const override { return "empty_kernel<<<1, 64>>>"; }
  double min_bytes() const override { return 0; }

 private:
  hipStream_t stream_;
};

std::string version_text(int version) {  // HIP's major * 10^7 + minor * 10^5 + patch
  return std::to_string(version / 10000000) + "." + std::to_string(version / 100000 % 100) + "." +
         std::to_string(version % 100000);
}

}  // namespace

HipDevice::HipDevice(int ordinal) {
  HIP_CHECK(hipSetDevice(ordinal));
  hipDeviceProp_t properties{};
  HIP_CHECK(hipGetDeviceProperties(&properties, ordinal));
  HIP_CHECK(hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking));
  architecture_ = properties.gcnArchName;
  info_.name = std::string(properties.name) + " (" + architecture_.substr(0, architecture_.find(':')) + ")";
  info_.backend = "hip";
  info_.multiprocessors = properties.multiProcessorCount;  // compute units
  info_.l2_bytes = std::size_t(properties.l2CacheSize);
  info_.memory_bytes = properties.totalGlobalMem;
  info_.max_sm_clock_mhz = properties.clockRate / 1000.0;  // kHz
  int driver = 0, runtime = 0;
  HIP_CHECK(hipDriverGetVersion(&driver));
  HIP_CHECK(hipRuntimeGetVersion(&runtime));
  info_.driver_version = version_text(driver);
  info_.runtime_version = "HIP " + version_text(runtime);
  const std::size_t flush_bytes = std::max(kMinFlushBytes, 4 * info_.l2_bytes) / 16 * 16;
  flush_buffer_ = HipBuffer<uint8_t>(flush_bytes);
  flush_sink_ = HipBuffer<uint32_t>(1);
  HIP_CHECK(hipMemsetAsync(flush_buffer_.data(), 0x5A, flush_buffer_.bytes(), stream_));
  HIP_CHECK(hipStreamSynchronize(stream_));
  clocks_ = std::make_unique<RocmSmiClocks>(properties.pciDomainID, properties.pciBusID, properties.pciDeviceID);
}

HipDevice::~HipDevice() {
  if (stream_) {
    (void)hipStreamSynchronize(stream_);
    (void)hipStreamDestroy(stream_);
  }
}

std::unique_ptr<Timer> HipDevice::make_timer() { return std::make_unique<EventTimer>(stream_); }

void HipDevice::flush_cache() {
  const std::size_t words = flush_buffer_.bytes() / 16;
  read_to_evict_kernel<<<1024, 256, 0, stream_>>>(reinterpret_cast<const uint4*>(flush_buffer_.data()), words,
                                                   flush_sink_.data());
  HIP_CHECK(hipGetLastError());
}

void HipDevice::synchronize() { HIP_CHECK(hipStreamSynchronize(stream_)); }

std::size_t HipDevice::free_memory_bytes() const {
  std::size_t free_bytes = 0, total_bytes = 0;
  HIP_CHECK(hipMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

std::unique_ptr<RunSequence> HipDevice::capture(const std::vector<PreparedGemm*>& runs) {
  return std::make_unique<GraphSequence>(stream_, runs);
}

std::unique_ptr<Timer> HipDevice::make_kernel_timer() {
  throw std::runtime_error(
      "the hip backend has no kernel-duration tracer (rocprofiler is not wired in); use --timing events or graph");
}

std::unique_ptr<PreparedGemm> HipDevice::empty_run() { return std::make_unique<EmptyRun>(stream_); }

HipDevice& as_hip_device(Device& device) {
  auto* hip_device = dynamic_cast<HipDevice*>(&device);
  if (!hip_device) throw std::logic_error("a hip kernel was opened on a non-HIP device");
  return *hip_device;
}

}  // namespace shapescope::kernels::rocm
