// stream_floor: how fast a kernel that only reads streams a buffer of a given size from HBM, timed as
// the decode GEMMs are timed (a CUDA graph of back-to-back launches over rotating buffers, each launch
// reading a buffer the previous ones left out of L2), without and with programmatic dependent launch.
// A weight-streaming decode GEMM of B bytes is held to this floor at B: launch, ramp-up and drain are a
// larger share of a small read than of the 256 MiB copy the copy bandwidth is measured on.
//
//   stream_floor [--sizes-mib 8,16,33,64,256]
//
// Prints, per size, the best rate over a few grid sizes (CTAs per SM) without and with PDL, beside the
// device-to-device copy bandwidth the profiler measures and records in every sidecar (kernels::DeviceInfo).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"

namespace {

#define CHECK_CUDA(call)                                                                          \
  do {                                                                                            \
    const cudaError_t status_ = (call);                                                           \
    if (status_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "stream_floor: %s: %s\n", #call, cudaGetErrorString(status_));         \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

constexpr int kThreads = 512;
constexpr int kLoadsInFlight = 8;  // 16-byte loads a thread has outstanding

// Reads `count` 16-byte words once; the XOR of everything read is stored only if it equals a value no
// random buffer yields, so the loads stay live and nothing is written. Under PDL the next grid may start
// at once (its reads do not depend on this one) and this grid waits for the previous one only before
// its (never taken) store, as a decode GEMM waits before writing its output.
__global__ void __launch_bounds__(kThreads) read_only(const uint4* __restrict__ data, size_t count, uint4* sink,
                                                       int pdl) {
  if (pdl) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  const size_t stride = size_t(gridDim.x) * kThreads;
  size_t i = size_t(blockIdx.x) * kThreads + threadIdx.x;
  uint32_t acc = 0;
  for (; i + (kLoadsInFlight - 1) * stride < count; i += kLoadsInFlight * stride) {
    uint4 words[kLoadsInFlight];
#pragma unroll
    for (int j = 0; j < kLoadsInFlight; ++j) words[j] = __ldcs(&data[i + j * stride]);
#pragma unroll
    for (int j = 0; j < kLoadsInFlight; ++j) acc ^= words[j].x ^ words[j].y ^ words[j].z ^ words[j].w;
  }
  for (; i < count; i += stride) {
    const uint4 word = __ldcs(&data[i]);
    acc ^= word.x ^ word.y ^ word.z ^ word.w;
  }
  if (pdl) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (acc == 0x9e3779b9u) sink[threadIdx.x] = make_uint4(acc, acc, acc, acc);
}

__global__ void fill(uint4* data, size_t count, uint32_t seed) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t x = uint32_t(i) * 2654435761u ^ seed;
    data[i] = make_uint4(x, x * 7u + 1u, x * 13u + 3u, x * 31u + 5u);
  }
}

float median(std::vector<float> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// µs per launch of a graph of `launches` back-to-back reads of `bytes` each, rotating over `buffers`:
// the median of 9 replays after 2 untimed ones.
float time_reads(const std::vector<uint4*>& buffers, size_t bytes, uint4* sink, int ctas, bool pdl,
                 cudaStream_t stream) {
  constexpr int kLaunches = 24;
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int l = 0; l < kLaunches; ++l) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(ctas);
    config.blockDim = dim3(kThreads);
    config.stream = stream;
    cudaLaunchAttribute attribute = {};
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &attribute;
    config.numAttrs = pdl ? 1 : 0;
    CHECK_CUDA(cudaLaunchKernelEx(&config, read_only, static_cast<const uint4*>(buffers[l % buffers.size()]),
                                  bytes / sizeof(uint4), sink, pdl ? 1 : 0));
  }
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  std::vector<float> per_launch;
  for (int replay = 0; replay < 11; ++replay) {
    CHECK_CUDA(cudaEventRecord(start, stream));
    CHECK_CUDA(cudaGraphLaunch(exec, stream));
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (replay >= 2) per_launch.push_back(ms * 1000.0f / kLaunches);
  }
  CHECK_CUDA(cudaEventDestroy(start));
  CHECK_CUDA(cudaEventDestroy(stop));
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  return median(per_launch);
}

std::vector<double> parse_sizes(int argc, char** argv) {
  std::string text = "8,16,24,33,48,64,128,256";
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--sizes-mib" && a + 1 < argc) {
      text = argv[++a];
    } else {
      std::fprintf(stderr, "stream_floor: unknown argument %s: use --sizes-mib 8,16,33\n", arg.c_str());
      std::exit(2);
    }
  }
  std::vector<double> sizes;
  size_t at = 0;
  while (at < text.size()) {
    const size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char* end = nullptr;
    const double mib = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || mib <= 0 || mib > 4096) {
      std::fprintf(stderr, "stream_floor: --sizes-mib %s: give sizes in MiB between 0 and 4096, e.g. 8,16,33\n",
                   text.c_str());
      std::exit(2);
    }
    sizes.push_back(mib);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<double> sizes = parse_sizes(argc, argv);
  const std::unique_ptr<shapescope::kernels::Device> device = shapescope::kernels::make_cuda_device();
  if (!device) {
    std::fprintf(stderr, "stream_floor: no CUDA GPU (%s): run it on a machine with one\n",
                 shapescope::kernels::cuda_unavailable_reason().c_str());
    return 2;
  }
  const shapescope::kernels::DeviceInfo info = device->info();
  const int sms = info.multiprocessors;
  const std::size_t l2_bytes = info.l2_bytes;
  const double copy = info.copy_tb_per_s;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  uint4* sink;
  CHECK_CUDA(cudaMalloc(&sink, kThreads * sizeof(uint4)));

  std::printf("device: %s, %d SMs, L2 %zu MiB; copy (256 MiB, read + written): %.3f TB/s\n", info.name.c_str(), sms,
              l2_bytes >> 20, copy);
  std::printf("%10s %10s %12s %12s %12s %12s %10s\n", "MiB", "bytes", "us", "TB/s", "us+pdl", "TB/s+pdl",
              "of copy");
  for (const double mib : sizes) {
    const size_t bytes = (size_t(mib * (1 << 20)) + 255) / 256 * 256;
    // Enough buffers that a launch's buffer was last read at least 4 x L2 bytes before.
    const size_t buffer_count = std::max<size_t>(2, (size_t(4) * l2_bytes + bytes - 1) / bytes + 1);
    std::vector<uint4*> buffers(buffer_count);
    for (size_t b = 0; b < buffer_count; ++b) {
      CHECK_CUDA(cudaMalloc(&buffers[b], bytes));
      fill<<<sms * 4, 256, 0, stream>>>(buffers[b], bytes / sizeof(uint4), uint32_t(b + 1));
      CHECK_CUDA(cudaGetLastError());
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    float best[2] = {1e30f, 1e30f};
    for (int pdl = 0; pdl < 2; ++pdl)
      for (const int per_sm : {1, 2, 4})
        best[pdl] = std::min(best[pdl], time_reads(buffers, bytes, sink, sms * per_sm, pdl != 0, stream));
    const double rate = bytes / (best[0] * 1e-6) / 1e12, rate_pdl = bytes / (best[1] * 1e-6) / 1e12;
    std::printf("%10.1f %10zu %12.2f %12.3f %12.2f %12.3f %9.1f%%\n", mib, bytes, best[0], rate, best[1], rate_pdl,
                100.0 * std::max(rate, rate_pdl) / copy);
    for (uint4* buffer : buffers) CHECK_CUDA(cudaFree(buffer));
  }
  CHECK_CUDA(cudaFree(sink));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return 0;
}
