// The stream hold of the CUDA device (kernels/stream_hold.hpp): a one-thread kernel spins on a word of mapped
// pinned host memory until the host releases it or %globaltimer passes its timeout. Holds are numbered: the
// host releases hold g by storing g, and hold g waits while the stored number is below g, so the word never
// needs a reset (a reset could catch a hold still queued behind earlier work and keep it waiting for the next
// release).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace shapescope::kernels::cuda {

// In mapped pinned host memory: the host writes `released`, the hold kernels write `timed_out`.
struct StreamHoldWords {
  alignas(8) std::uint64_t released = 0;   // the latest hold number released
  alignas(8) std::uint64_t timed_out = 0;  // holds that ended by their timeout
};

// Enqueues hold number `hold` on `stream`; `words` is the device's view of the mapped words (launch checked).
void launch_stream_hold(StreamHoldWords* words, std::uint64_t hold, std::uint64_t timeout_ns, cudaStream_t stream);

class StreamHolder {
 public:
  explicit StreamHolder(std::uint64_t timeout_ns);
  ~StreamHolder();
  StreamHolder(const StreamHolder&) = delete;
  StreamHolder& operator=(const StreamHolder&) = delete;

  void hold(cudaStream_t stream);
  void release() noexcept;
  long long timed_out_holds() const;
  std::uint64_t timeout_ns() const { return timeout_ns_; }

 private:
  std::uint64_t timeout_ns_;
  StreamHoldWords* host_words_ = nullptr;
  StreamHoldWords* device_words_ = nullptr;
  std::uint64_t holds_ = 0;
};

}  // namespace shapescope::kernels::cuda
