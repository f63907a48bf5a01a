// Holding the stream runs use while timed work is enqueued (nvbench calls it a blocking kernel): a kernel that
// waits for the host goes first, the samples' flushes, events and runs queue up behind it, and a release lets
// the device run them back to back. Without it, a run whose host-side enqueue outlasts the flush before it
// (a heavy library call, a Python callable) leaves the device idle between the start event and the run, and
// that idle time is timed. The hold ends by itself after a timeout, so a host that never releases, or a launch
// queue that fills while held, cannot hang the device: the queued work then runs as it would without the hold.
// A device that can hold implements StreamHold beside kernels::Device (the CUDA device); the profiler asks for
// it by dynamic_cast and holds nothing without it (the CPU backend, ROCm).
#pragma once

namespace shapescope::kernels {

class StreamHold {
 public:
  virtual ~StreamHold() = default;
  // Enqueues the hold on the stream runs use: work enqueued after it starts only after release() or the
  // hold's timeout.
  virtual void hold() = 0;
  // Ends the latest hold (at once if its kernel is waiting, or as soon as it starts); nothing if it timed out.
  virtual void release() noexcept = 0;
  // The holds so far that ended by their timeout rather than by release(). A hold is counted once its kernel
  // ended: read it after waiting for work enqueued behind the hold.
  virtual long long timed_out_holds() const = 0;
};

// Holds `stream_hold` while alive (nothing when null): whatever ends a held batch (its last launch, an
// interrupt, an exception) releases it.
class ScopedStreamHold {
 public:
  explicit ScopedStreamHold(StreamHold* stream_hold) : stream_hold_(stream_hold) {
    if (stream_hold_) stream_hold_->hold();
  }
  ~ScopedStreamHold() {
    if (stream_hold_) stream_hold_->release();
  }
  ScopedStreamHold(const ScopedStreamHold&) = delete;
  ScopedStreamHold& operator=(const ScopedStreamHold&) = delete;

 private:
  StreamHold* stream_hold_;
};

}  // namespace shapescope::kernels
