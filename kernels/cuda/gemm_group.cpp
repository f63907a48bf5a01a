#include "kernels/cuda/gemm_group.hpp"

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {

GemmGroup::GemmGroup(Device& device, std::vector<PreparedGemm*> parts, GroupLaunch launch)
    : device_(as_cuda_device(device)), parts_(std::move(parts)), launch_(launch) {
  if (launch_ == GroupLaunch::two_streams) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&side_stream_, cudaStreamNonBlocking));
    // Timing-free events: they only order the two streams.
    CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
  }
}

GemmGroup::~GemmGroup() {
  if (side_stream_) {
    cudaStreamSynchronize(side_stream_);
    cudaStreamDestroy(side_stream_);
  }
  if (fork_) cudaEventDestroy(fork_);
  if (join_) cudaEventDestroy(join_);
}

void GemmGroup::run() {
  if (launch_ == GroupLaunch::serial) {
    for (PreparedGemm* part : parts_) part->run();
    return;
  }
  // Even parts on the main stream, odd parts on the side stream, joined before anything later.
  const cudaStream_t main_stream = device_.stream();
  CUDA_CHECK(cudaEventRecord(fork_, main_stream));
  CUDA_CHECK(cudaStreamWaitEvent(side_stream_, fork_, 0));
  for (std::size_t i = 0; i < parts_.size(); ++i) {
    if (i % 2 == 0) {
      parts_[i]->run();
    } else {
      CudaDevice::StreamOverride on_side(device_, side_stream_);
      parts_[i]->run();
    }
  }
  CUDA_CHECK(cudaEventRecord(join_, side_stream_));
  CUDA_CHECK(cudaStreamWaitEvent(main_stream, join_, 0));
}

CheckResult GemmGroup::check() {
  CheckResult combined;
  for (PreparedGemm* part : parts_) {
    const CheckResult result = part->check();
    // NaN must survive the max: a NaN part fails the group.
    combined.rel_err = (result.rel_err != result.rel_err) ? result.rel_err : std::max(combined.rel_err, result.rel_err);
    combined.elements_checked += result.elements_checked;
    combined.unwritten += result.unwritten;
  }
  return combined;
}

std::string GemmGroup::launch_name() const {
  std::string name = launch_ == GroupLaunch::serial ? "serial: " : "two streams: ";
  for (std::size_t i = 0; i < parts_.size(); ++i) name += (i ? " + " : "") + parts_[i]->launch_name();
  return name;
}

double GemmGroup::min_bytes() const {
  double bytes = 0;
  for (const PreparedGemm* part : parts_) bytes += part->min_bytes();
  return bytes;
}

}  // namespace shapescope::kernels::cuda
