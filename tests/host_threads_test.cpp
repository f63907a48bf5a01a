// The check's kept host threads: every index runs exactly once, callers at once all finish, small jobs and
// a second caller run on the caller's thread, and a block's exception reaches the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/host_threads.hpp"

namespace shapescope::kernels {
namespace {

TEST(HostThreads, EveryIndexRunsExactlyOnceOverManyJobs) {
  HostThreads threads(4);
  ASSERT_EQ(threads.threads(), 4u);
  for (std::size_t count : {2u, 3u, 7u, 64u, 1000u, 4097u}) {
    std::vector<std::atomic<int>> runs(count);
    threads.run_blocks(count, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) ++runs[i];
    }, 2);
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(runs[i].load(), 1) << "count " << count << " index " << i;
  }
}

TEST(HostThreads, JobsBelowTheMinimumRunOnTheCallersThreadAlone) {
  HostThreads threads(4);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::thread::id> ran;
  threads.run_blocks(10, [&](std::size_t, std::size_t) { ran.push_back(std::this_thread::get_id()); }, 64);
  ASSERT_EQ(ran.size(), 1u);
  EXPECT_EQ(ran[0], caller);
}

TEST(HostThreads, CallersAtOnceAllFinishWithTheirOwnSums) {
  HostThreads threads(3);
  constexpr int kCallers = 4;
  std::vector<long long> sums(kCallers, 0);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int job = 0; job < 50; ++job) {
        std::atomic<long long> sum = 0;
        threads.run_blocks(1000, [&](std::size_t begin, std::size_t end) {
          for (std::size_t i = begin; i < end; ++i) sum += static_cast<long long>(i) * (c + 1);
        }, 2);
        sums[std::size_t(c)] += sum;
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(sums[std::size_t(c)], 50LL * 499500 * (c + 1));
}

TEST(HostThreads, ABlocksExceptionReachesTheCallerAndTheThreadsStayUsable) {
  HostThreads threads(4);
  EXPECT_THROW(threads.run_blocks(100, [](std::size_t begin, std::size_t end) {
    if (begin <= 99 && 99 < end) throw std::runtime_error("block failed");
  }, 2), std::runtime_error);
  std::atomic<int> runs = 0;
  threads.run_blocks(100, [&](std::size_t begin, std::size_t end) { runs += int(end - begin); }, 2);
  EXPECT_EQ(runs.load(), 100);
}

}  // namespace
}  // namespace shapescope::kernels
