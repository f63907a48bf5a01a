#include "kernels/host_threads.hpp"

#include <algorithm>
#include <utility>

namespace shapescope::kernels {

HostThreads::HostThreads(std::size_t threads) {
  for (std::size_t i = 1; i < threads; ++i) helpers_.emplace_back([this] { help(); });
}

HostThreads::~HostThreads() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& helper : helpers_) helper.join();
}

HostThreads& HostThreads::shared() {
  static HostThreads threads(std::clamp<std::size_t>(std::thread::hardware_concurrency() / 2, 1, 8));
  return threads;
}

bool HostThreads::run_next_block() {
  std::unique_lock lock(mutex_);
  if (!work_ || next_ >= blocks_) return false;
  const std::size_t begin = next_++ * block_;
  const auto* work = work_;
  const std::size_t end = std::min(count_, begin + block_);
  lock.unlock();
  std::exception_ptr error;
  try {
    (*work)(begin, end);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  if (error && !error_) error_ = error;
  if (--unfinished_ == 0) {
    work_ = nullptr;
    done_.notify_all();
  }
  return true;
}

void HostThreads::help() {
  unsigned long seen = 0;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || job_ != seen; });
      if (stopping_) return;
      seen = job_;
    }
    while (run_next_block()) {
    }
  }
}

void HostThreads::run_blocks(std::size_t count, const std::function<void(std::size_t, std::size_t)>& work,
                             std::size_t min_items) {
  std::unique_lock caller(caller_, std::try_to_lock);
  if (helpers_.empty() || count < std::max<std::size_t>(min_items, 2) || !caller) {
    work(0, count);
    return;
  }
  {
    const std::lock_guard lock(mutex_);
    work_ = &work;
    count_ = count;
    block_ = (count + threads() - 1) / threads();
    blocks_ = (count + block_ - 1) / block_;
    next_ = 0;
    unfinished_ = blocks_;
    ++job_;
  }
  wake_.notify_all();
  while (run_next_block()) {
  }
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return work_ == nullptr; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace shapescope::kernels
