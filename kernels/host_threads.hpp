// Host threads for the float64 check, started once and kept for the process: a check splits its decoding and
// sums into blocks across them. Starting threads for every call cost ~0.4 ms a check on an H200 host, as much
// as the check's own work on small shapes.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace shapescope::kernels {

class HostThreads {
 public:
  // `threads` counts the caller: threads - 1 helpers are started.
  explicit HostThreads(std::size_t threads);
  ~HostThreads();
  HostThreads(const HostThreads&) = delete;
  HostThreads& operator=(const HostThreads&) = delete;

  // Half the cores, at most 8: on a GPU the timing thread runs beside them.
  static HostThreads& shared();

  // Runs work(begin, end) over [0, count) in one block per thread, the caller taking blocks too, and returns
  // when all are done; rethrows the first exception a block threw. On the calling thread alone when
  // count < min_items or another caller holds the helpers.
  void run_blocks(std::size_t count, const std::function<void(std::size_t, std::size_t)>& work,
                  std::size_t min_items);
  std::size_t threads() const { return helpers_.size() + 1; }

 private:
  void help();
  bool run_next_block();  // false when the current job has no block left

  std::mutex caller_;  // one job at a time
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t, std::size_t)>* work_ = nullptr;
  std::size_t count_ = 0, block_ = 0, blocks_ = 0, next_ = 0, unfinished_ = 0;
  unsigned long job_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
  std::vector<std::thread> helpers_;
};

}  // namespace shapescope::kernels
