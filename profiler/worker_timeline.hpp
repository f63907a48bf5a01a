// Where a --gpus/--workers run's time goes, worker by worker. Each worker process appends one JSON line per
// event to `<out>/worker-<slot>.log` (ready to measure; each shard it measured), stamped with the host's
// monotonic clock, which every process of the host shares; the supervisor adds when it started and reaped
// each process, and prints one row per worker at the end.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace shapescope::profiler {

// CLOCK_MONOTONIC in seconds: comparable across the processes of one host.
double monotonic_seconds();

std::filesystem::path worker_log_path(const std::filesystem::path& out, int slot);
// The worker holds its device and has measured its baseline (warm-up, floors): measuring starts.
void log_worker_ready(const std::filesystem::path& out, int slot);
// A shard ran from `start_s` to `end_s` and measured `points` new points.
void log_worker_shard(const std::filesystem::path& out, int slot, int shard, int64_t points, double start_s,
                      double end_s);

struct WorkerProcess {
  int pid = 0;
  double started_s = 0, ready_s = -1, ended_s = 0;  // ready_s < 0: it never got ready
};
struct WorkerShard {
  int shard = 0;
  int64_t points = 0;
  double start_s = 0, end_s = 0;
};
struct WorkerTimeline {
  std::string description;               // "GPU 1"
  std::vector<WorkerProcess> processes;  // the first and every restart
  std::vector<WorkerShard> shards;
};

// Adds the events of the slot's log to `timeline`, ready times matched to its processes by pid. A line a
// killed worker left torn is skipped.
void read_worker_log(const std::filesystem::path& out, int slot, WorkerTimeline& timeline);

// One row per worker: shards, points, start-up (started to ready, restarts summed), busy (inside shards),
// wall (first start to last end), busy % of wall, and idle at the end (until the last worker ended).
std::string worker_table(const std::vector<WorkerTimeline>& workers);

}  // namespace shapescope::profiler
