// The scale-out modes of the built `profile` on the CPU backend: shards from mpirun's environment,
// CPU worker processes, a shard or a worker killed with SIGKILL, each merged and compared with the
// single-process sweep's point set; bad shard and GPU specs as one line and exit 2.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/csv.hpp"
#include "common/file_lock.hpp"
#include "profiler/shard_plan.hpp"
#include "tests/profile_cli_support.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using PointSet = std::set<std::pair<std::string, std::string>>;  // (file, M)

// `samples` per point: few for a quick sweep, many to slow one down so that a kill lands mid-sweep.
std::string sweep(int samples = 3) {
  return "--model qwen3_4b --module o_proj --tp 8 --backend cpu --threads 1 --kernel cpu_bf16 --kernel "
         "cpu_fp8_blockscale --peak-tflops 1 --m-list 1,2,3,4,5,6,7,8,12,16,24,32 --warmup 0 --hot --min-samples " +
         std::to_string(samples) + " --max-samples " + std::to_string(samples);
}
const std::string kSweep = sweep();

using shapescope::testing_support::expect_user_error;
using shapescope::testing_support::profile_binary;
using shapescope::testing_support::start_profile;
using shapescope::testing_support::wait_for;
using shapescope::testing_support::words;
std::string analyze_binary() { return (fs::path(SHAPESCOPE_BIN_DIR) / "analyze").string(); }

std::size_t occurrences(const std::string& text, const std::string& fragment) {
  std::size_t count = 0;
  for (std::size_t at = text.find(fragment); at != std::string::npos; at = text.find(fragment, at + 1)) ++count;
  return count;
}

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

Outcome run(const std::string& command) {
  Outcome outcome;
  FILE* pipe = ::popen(("timeout 300 " + command + " 2>&1").c_str(), "r");
  if (!pipe) return outcome;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) outcome.output.append(buffer, n);
  const int status = ::pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return outcome;
}

// Every (file, M) of the CSVs at the top of `folder`.
PointSet point_set(const fs::path& folder) {
  PointSet points;
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (entry.path().extension() != ".csv") continue;
    const shapescope::csv::Table table = shapescope::csv::read_file(entry.path());
    const int batch = table.column("batch");
    for (const auto& row : table.rows) points.insert({entry.path().filename().string(), row[std::size_t(batch)]});
  }
  return points;
}

// The fields after `worker` on its row of the per-worker table (shards, points, start-up, busy, wall, busy %,
// idle at end, "s"), empty when it has none.
std::vector<std::string> table_row(const std::string& output, const std::string& worker) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(worker + " ", 0) != 0 || line.find('%') == std::string::npos) continue;
    std::istringstream fields(line.substr(worker.size()));
    std::vector<std::string> row;
    for (std::string field; fields >> field;) row.push_back(field);
    return row;
  }
  return {};
}

// The events-mode timing floor recorded in the sidecars of every shard worker `slot` measured points in,
// as its log names them.
std::set<std::string> events_floors_of_worker(const fs::path& out, int slot) {
  std::set<std::string> floors;
  std::ifstream log(out / ("worker-" + std::to_string(slot) + ".log"));
  for (std::string line; std::getline(log, line);) {
    const nlohmann::json event = nlohmann::json::parse(line);
    if (event["event"] != "shard" || event["points"].get<int>() == 0) continue;
    const fs::path shard = out / ("shard-" + std::to_string(event["shard"].get<int>()) + "-of-" +
                                  std::to_string(shapescope::profiler::work_queue_shares(2).size()));
    for (const auto& entry : fs::directory_iterator(shard)) {
      if (entry.path().extension() != ".json" || entry.path().filename() == "shard.json") continue;
      std::ifstream sidecar(entry.path());
      const nlohmann::json json = nlohmann::json::parse(sidecar);
      floors.insert(json["measurement"]["timing_floors"]["events"]["empty_kernel_us"].dump());
    }
  }
  return floors;
}

class ProfileScaleOut : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(profile_binary())) GTEST_SKIP() << "profile binary not built";
    ::setenv("SHAPESCOPE_LOCK_DIR", (dir / "locks").c_str(), 1);  // device locks of this test only
  }
  // The single-process sweep's point set, measured once per test.
  PointSet single_process_points() {
    const Outcome outcome = run(profile_binary() + " " + kSweep + " --out " + (dir / "single").string());
    EXPECT_EQ(outcome.exit_code, 0) << outcome.output;
    const PointSet points = point_set(dir / "single");
    EXPECT_EQ(points.size(), 24u);
    return points;
  }
  shapescope::testing_support::ScratchDir scratch_;
  const fs::path dir = scratch_.path();
};

TEST_F(ProfileScaleOut, MpirunShardsMergeIntoTheSingleProcessPointSet) {
  if (run("sh -c 'command -v mpirun'").exit_code != 0) GTEST_SKIP() << "mpirun not installed (Debian: openmpi-bin)";
  const fs::path out = dir / "mpi";
  // Root in CI containers: OpenMPI refuses root without both of these.
  const Outcome ranks = run("env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --allow-run-as-root "
                            "--oversubscribe -np 2 " + profile_binary() + " " + kSweep + " --shard auto --out " +
                            out.string());
  ASSERT_EQ(ranks.exit_code, 0) << ranks.output;
  EXPECT_NE(ranks.output.find("shard 0 of 2 (OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE)"), std::string::npos)
      << ranks.output;
  EXPECT_NE(ranks.output.find("shard 1 of 2"), std::string::npos) << ranks.output;
  const Outcome merged = run(profile_binary() + " --merge " + out.string());
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_NE(merged.output.find("complete (24 points in 2 shards)"), std::string::npos) << merged.output;
  EXPECT_EQ(point_set(out), single_process_points());
}

TEST_F(ProfileScaleOut, KilledShardRerunCompletesTheSet) {
  const fs::path out = dir / "killed";
  ASSERT_EQ(run(profile_binary() + " " + kSweep + " --shard 0/2 --out " + out.string()).exit_code, 0);
  // Shard 1, slowed down so the kill lands mid-sweep, killed with SIGKILL.

  const pid_t pid = start_profile(words(sweep(400) + " --shard 1/2 --out " + out.string()));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  // Killed once it has written at least one row, so the rerun has something to resume.
  const fs::path some_csv = out / "shard-1-of-2";
  while (std::chrono::steady_clock::now() < deadline) {
    bool wrote = false;
    if (fs::exists(some_csv))
      for (const auto& entry : fs::directory_iterator(some_csv)) wrote = wrote || entry.path().extension() == ".csv";
    if (wrote) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ASSERT_EQ(wait_for(pid), -SIGKILL) << "shard 1 finished before the kill; slow it down further";
  const Outcome partial = run(profile_binary() + " --merge " + out.string());
  EXPECT_EQ(partial.exit_code, 1) << partial.output;
  EXPECT_NE(partial.output.find("points missing"), std::string::npos) << partial.output;
  const Outcome analyzed_partial =
      run(analyze_binary() + " " + out.string() + " --out-dir " + (dir / "analysis").string());
  EXPECT_EQ(analyzed_partial.exit_code, 0) << analyzed_partial.output;
  EXPECT_EQ(occurrences(analyzed_partial.output, "points missing"), 1u) << analyzed_partial.output;

  const Outcome rerun = run(profile_binary() + " " + kSweep + " --shard 1/2 --out " + out.string());
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  const Outcome merged = run(profile_binary() + " --merge " + out.string());
  ASSERT_EQ(merged.exit_code, 0) << merged.output;
  EXPECT_EQ(point_set(out), single_process_points());
}

TEST_F(ProfileScaleOut, CpuWorkersShareTheShardsAndARestartedWorkerResumes) {
  const fs::path out = dir / "workers";
  const Outcome workers = run(profile_binary() + " " + kSweep + " --workers 2 --out " + out.string());
  ASSERT_EQ(workers.exit_code, 0) << workers.output;
  const std::size_t queue = shapescope::profiler::work_queue_shares(2).size();
  EXPECT_NE(workers.output.find(fmt::format("2 worker process(es), a queue of {} shards", queue)), std::string::npos)
      << workers.output;
  EXPECT_NE(workers.output.find("CPU worker 1 measured shard"), std::string::npos) << workers.output;
  const std::string complete = fmt::format("complete (24 points in {} shards)", queue);
  EXPECT_NE(workers.output.find(complete), std::string::npos) << workers.output;
  // The per-worker table accounts for every point, and the run's phases are timed.
  const std::vector<std::string> first = table_row(workers.output, "CPU worker 0");
  const std::vector<std::string> second = table_row(workers.output, "CPU worker 1");
  ASSERT_EQ(first.size(), 8u) << workers.output;
  ASSERT_EQ(second.size(), 8u) << workers.output;
  EXPECT_EQ(std::stoi(first[1]) + std::stoi(second[1]), 24) << workers.output;
  EXPECT_NE(workers.output.find("s: request check "), std::string::npos) << workers.output;
  // Each worker measured its baseline once: every shard it measured records the same timing floor.
  for (int slot : {0, 1}) {
    const std::set<std::string> floors = events_floors_of_worker(out, slot);
    EXPECT_EQ(floors.size(), 1u) << "worker " << slot << ": " << floors.size() << " distinct floors";
  }
  const PointSet single = single_process_points();
  EXPECT_EQ(point_set(out), single);
  // analyze reads the folder of shards as one profile: two series of 12 points.
  const Outcome analyzed = run(analyze_binary() + " " + out.string() + " --out-dir " + (dir / "analysis").string());
  EXPECT_EQ(analyzed.exit_code, 0) << analyzed.output;
  EXPECT_EQ(occurrences(analyzed.output, complete), 1u) << analyzed.output;
  EXPECT_EQ(occurrences(analyzed.output, "12 points, 0 excluded"), 2u) << analyzed.output;

  // A worker killed mid-shard: the supervisor starts it again and the sweep completes.
  const fs::path again = dir / "workers_killed";
  const std::string log = (dir / "killed.log").string();
  const pid_t supervisor = start_profile(words(sweep(200) + " --workers 2 --out " + again.string()), log);
  pid_t victim = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (victim == 0 && std::chrono::steady_clock::now() < deadline) {
    // The two workers (the request's check process before them runs alone).
    std::ifstream children("/proc/" + std::to_string(supervisor) + "/task/" + std::to_string(supervisor) + "/children");
    std::vector<pid_t> pids;
    for (pid_t pid = 0; children >> pid;) pids.push_back(pid);
    if (pids.size() == 2) {
      victim = pids.front();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ASSERT_GT(victim, 0) << "no worker process seen";
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  ::kill(victim, SIGKILL);
  const int exit_code = wait_for(supervisor);
  std::ifstream log_file(log);
  const std::string text((std::istreambuf_iterator<char>(log_file)), {});
  ASSERT_EQ(exit_code, 0) << text;
  EXPECT_NE(text.find("died (signal 9); starting it again"), std::string::npos) << text;
  EXPECT_EQ(table_row(text, "CPU worker 0").size(), 8u) << text;  // the restarted slot's row is in the table
  EXPECT_EQ(point_set(again), single);
}

TEST_F(ProfileScaleOut, ABusyDeviceStopsOrWaits) {
  // This process measures "CPU worker 0" (its device lock held); a worker for it must not measure beside it.
  fs::create_directories(dir / "locks");
  std::optional<shapescope::FileLock> held = shapescope::FileLock::acquire(
      dir / "locks" / "cpu-worker-0", [](const std::string&) {}, [] { return true; });
  ASSERT_TRUE(held);
  const std::string busy = kSweep + " --workers 1 --out " + (dir / "busy").string();
  const Outcome stopped = run(profile_binary() + " " + busy + " --device-busy stop");
  EXPECT_EQ(stopped.exit_code, 2) << stopped.output;
  EXPECT_NE(stopped.output.find("CPU worker 0 is being measured by process " + std::to_string(::getpid())),
            std::string::npos)
      << stopped.output;
  // Waiting: it says so, and measures once the device is free (freed only after it said so, however
  // long its setup takes on a loaded machine).
  const fs::path wait_log = dir / "wait.log";
  std::thread free_it([&] {
    for (int tenth = 0; tenth < 1200; ++tenth) {
      std::ifstream log_file(wait_log);
      const std::string text((std::istreambuf_iterator<char>(log_file)), {});
      if (text.find("waiting until it is free") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    held.reset();
  });
  Outcome waited = run(profile_binary() + " " + busy + " > " + wait_log.string());  // 2>&1 follows: both there
  free_it.join();
  std::ifstream log_file(wait_log);
  waited.output.assign(std::istreambuf_iterator<char>(log_file), {});
  EXPECT_EQ(waited.exit_code, 0) << waited.output;
  EXPECT_NE(waited.output.find("waiting until it is free"), std::string::npos) << waited.output;
  EXPECT_NE(waited.output.find(fmt::format("complete (24 points in {} shards)",
                                           shapescope::profiler::work_queue_shares(1).size())),
            std::string::npos)
      << waited.output;
}

TEST_F(ProfileScaleOut, BadShardAndGpuSpecsAreOneLineAndExit2) {
  const std::string sweep = "--model qwen3_4b --backend cpu --out " + (dir / "bad").string();
  expect_user_error(sweep + " --shard 2/2", {"0 to N-1 = 1"});
  expect_user_error(sweep + " --shard 0/0", {"give N from 1"});
  expect_user_error(sweep + " --shard 0/2", {"disagrees with the launcher"},
                    "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2");
  expect_user_error(sweep + " --shard auto", {"no launcher"});
  expect_user_error("--model qwen3_4b --gpus all --out " + (dir / "bad").string(), {"--gpus all: no GPU here"});
  expect_user_error(sweep + " --workers 2 --shard 0/2", {"--shard and --workers"});
  expect_user_error("--model qwen3_4b --backend cpu --workers 2", {"--workers needs --out"});
  // Checked once before the workers start: one line, not one per worker.
  expect_user_error("--model nope --backend cpu --workers 3 --out " + (dir / "bad").string(), {"unknown model 'nope'"});
  expect_user_error("--merge " + (dir / "nothing").string(), {"no shard folders"});
  EXPECT_FALSE(fs::exists(dir / "bad" / "shard-0-of-2"));
}

}  // namespace
