// One host, many devices: `profile --gpus all|0,1,..` (or `--workers N` on the CPU backend) starts one
// worker process per device, each pinned to its GPU with CUDA_VISIBLE_DEVICES. The sweep is cut into a work
// queue of shards that shrink as it drains (shard_plan: work_queue_shares); each worker measures its device's
// baseline once, then takes the first shard that is neither complete nor held by another worker (a claim lock
// per shard, released by the kernel when a worker dies) until none is left, so a worker that finishes early
// (a faster GPU, cheaper points than predicted) takes more. A worker killed mid-shard is started again on its
// device and resumes that shard, losing only the point it was measuring. At the end the shards are merged
// into one profile per file in --out.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/file_lock.hpp"
#include "kernels/kernel.hpp"
#include "profiler/device_lock.hpp"
#include "profiler/sweep_runner.hpp"
#include "profiler/worker_timeline.hpp"

namespace shapescope::profiler {

// A worker that dies is started again at most this many times per device before the run gives up.
inline constexpr int kMaxWorkerRestarts = 3;

// `--gpus` text against the GPUs this process sees: "all", or distinct indices "0,1,3". Throws UserError,
// one line, on a bad list, an index that does not exist, or no GPU at all (`why_none` says why).
std::vector<int> parse_gpu_list(const std::string& text, int gpus_present, const std::string& why_none);

struct WorkerSlot {
  std::string cuda_visible_devices;  // "" for a CPU worker
  std::string description;           // "GPU 1", "CPU worker 0"
};

struct PoolRun {
  int exit_code = 0;                    // 0 when every worker finished, 2 when one refused its input, 130
                                        // when interrupted, 1 otherwise
  std::vector<WorkerTimeline> workers;  // per slot: its processes and the shards they measured
};

// Starts `worker_argv` (argv[0] is ignored: /proc/self/exe runs) once per slot with
// `--worker-slot <i> --worker-count <slots>` appended and CUDA_VISIBLE_DEVICES set, restarts workers
// killed by a signal, forwards an interrupt. `out` is the sweep's --out, where the workers log their events.
PoolRun supervise_workers(const std::vector<std::string>& worker_argv, const std::vector<WorkerSlot>& slots,
                          const std::filesystem::path& out);

// Runs `worker_argv` once on `slot` with `--worker-slot 0 --worker-count 0`: a worker that only checks
// the request (prepare_sweep) and exits, so a bad option is one line before any worker starts. Returns its exit code.
int check_request_in_worker(const std::vector<std::string>& worker_argv, const WorkerSlot& slot);

// The queue's next shard for this process: the lowest index of `shards` under `out` that is not complete
// and that no other process holds, with its claim held (for as long as the returned lock lives).
struct ClaimedShard {
  int index = 0;
  FileLock claim;
};
std::optional<ClaimedShard> claim_next_shard(const std::filesystem::path& out, int shards);

// The worker's side: measures `device`'s baseline, then shards of the queue cut for `workers` workers from
// `plan` (out_dir: the sweep's --out) until none is left; one line per shard, events into its slot's log.
// `lock_key` names the device's lock. Returns 0, or 130 when interrupted.
int work_on_shards(kernels::Device& device, const SweepPlan& plan, int workers, int slot, const std::string& lock_key,
                   const std::string& description, BusyPolicy busy);

}  // namespace shapescope::profiler
