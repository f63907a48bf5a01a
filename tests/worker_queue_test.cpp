// The workers' side of --gpus/--workers without a device: the queue hands each process the lowest shard
// that is neither complete nor held, a dead holder's shard goes back to the queue; the per-worker table
// reads the workers' event logs and says where the time went.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/shard_manifest.hpp"
#include "profiler/worker_pool.hpp"
#include "profiler/worker_timeline.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope::profiler {
namespace {

namespace fs = std::filesystem;

class WorkerQueue : public ::testing::Test {
 protected:
  void mark_complete(int index, int count) {
    const fs::path folder = dir / shard_folder_name(index, count);
    fs::create_directories(folder);
    ShardManifest manifest;
    manifest.index = index;
    manifest.count = count;
    manifest.complete = true;
    write_manifest(folder, manifest);
  }
  testing_support::ScratchDir scratch;
  const fs::path dir = scratch.path();
};

using Row = std::vector<std::string>;
// The fields after `worker` on its line of `table`.
Row row_of(const std::string& table, const std::string& worker) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(worker + " ", 0) != 0) continue;
    std::istringstream fields(line.substr(worker.size()));
    Row row;
    for (std::string field; fields >> field;) row.push_back(field);
    return row;
  }
  return {};
}

TEST_F(WorkerQueue, EachClaimTakesTheLowestShardNeitherCompleteNorHeld) {
  std::optional<ClaimedShard> first = claim_next_shard(dir, 4);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->index, 0);
  std::optional<ClaimedShard> second = claim_next_shard(dir, 4);  // shard 0 is held: the next one
  ASSERT_TRUE(second);
  EXPECT_EQ(second->index, 1);
  mark_complete(2, 4);
  std::optional<ClaimedShard> third = claim_next_shard(dir, 4);  // shard 2 is done: skipped
  ASSERT_TRUE(third);
  EXPECT_EQ(third->index, 3);
  EXPECT_FALSE(claim_next_shard(dir, 4));  // all held or complete: the queue is empty for this process
  // The holder of shard 0 dies before completing it (its lock goes): the shard is back in the queue.
  first.reset();
  std::optional<ClaimedShard> again = claim_next_shard(dir, 4);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->index, 0);
}

TEST_F(WorkerQueue, TheTableSaysWhereEachWorkersTimeWent) {
  // Worker 0: started at 100, ready at 101.5, two shards (8 s busy), ended at 110. Worker 1: killed once
  // (started 100, ready 102, ended 104), restarted (104, ready 105), one shard of 3 s, ended at 108.
  const int pid = int(::getpid());
  std::vector<WorkerTimeline> workers(2);
  workers[0].description = "GPU 0";
  workers[0].processes = {{pid, 100, -1, 110}};
  workers[1].description = "GPU 1";
  workers[1].processes = {{pid + 1, 100, 102, 104}, {pid + 2, 104, 105, 108}};
  workers[1].shards = {{1, 30, 105, 108}};
  // Worker 0's events come from its log, as a worker writes them; a torn last line is skipped.
  log_worker_ready(dir, 0);
  log_worker_shard(dir, 0, 0, 50, 101.5, 106.5);
  log_worker_shard(dir, 0, 2, 20, 106.5, 109.5);
  { std::ofstream(worker_log_path(dir, 0), std::ios::app) << R"({"event":"shard","pid":)"; }
  read_worker_log(dir, 0, workers[0]);
  ASSERT_EQ(workers[0].shards.size(), 2u);
  EXPECT_EQ(workers[0].shards[1].points, 20);
  ASSERT_GT(workers[0].processes[0].ready_s, 0);  // stamped now, by this process's pid
  workers[0].processes[0].ready_s = 101.5;        // placed on the example's clock

  const std::string table = worker_table(workers);
  // shards, points, start-up s, busy s, wall s, busy %, idle at end
  EXPECT_EQ(row_of(table, "GPU 0"), (Row{"2", "70", "1.5", "8.0", "10.0", "80%", "0.0", "s"})) << table;
  EXPECT_EQ(row_of(table, "GPU 1"), (Row{"1", "30", "3.0", "3.0", "8.0", "38%", "2.0", "s"})) << table;
}

}  // namespace
}  // namespace shapescope::profiler
