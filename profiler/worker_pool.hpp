// One host, many devices: `profile --gpus all|0,1,..` (or `--workers N` on the CPU backend) starts one
// worker process per device, each pinned to its GPU with CUDA_VISIBLE_DEVICES. The sweep is cut into
// kShardsPerWorker x workers shards of equal predicted cost; each worker takes the next shard no other
// worker holds (a claim lock per shard, released by the kernel when a worker dies) until none is left.
// A worker killed mid-shard is started again on its device and resumes that shard, losing only the
// point it was measuring. At the end the shards are merged into one profile per file in --out.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "profiler/device_lock.hpp"
#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

// Two shards per worker: a worker that finishes early (a faster GPU) takes over half of a slow one's
// share, while each shard's files pay their setup (weights, peak, warm-up) only twice per worker.
inline constexpr int kShardsPerWorker = 2;
// A worker that dies is started again at most this many times per device before the run gives up.
inline constexpr int kMaxWorkerRestarts = 3;

// `--gpus` text against the GPUs this process sees: "all", or distinct indices "0,1,3". Throws UserError,
// one line, on a bad list, an index that does not exist, or no GPU at all (`why_none` says why).
std::vector<int> parse_gpu_list(const std::string& text, int gpus_present, const std::string& why_none);

struct WorkerSlot {
  std::string cuda_visible_devices;  // "" for a CPU worker
  std::string description;           // "GPU 1", "CPU worker 0"
};

// Starts `worker_argv` (argv[0] is ignored: /proc/self/exe runs) once per slot with
// `--worker-slot <i> --worker-shards <shards>` appended and CUDA_VISIBLE_DEVICES set, restarts workers
// killed by a signal, forwards an interrupt. Returns the exit code: 0 when every worker finished,
// 2 when one refused its input, 130 when interrupted, 1 otherwise.
int supervise_workers(const std::vector<std::string>& worker_argv, const std::vector<WorkerSlot>& slots, int shards);

// Runs `worker_argv` once on `slot` with `--worker-slot 0 --worker-shards 0`: a worker that only checks
// the request (prepare_sweep) and exits, so a bad option is one line before any worker starts. Returns its exit code.
int check_request_in_worker(const std::vector<std::string>& worker_argv, const WorkerSlot& slot);

// The worker's side: measures shards of `plan` (out_dir: the sweep's --out) on `device` until none is
// left unclaimed and incomplete; prints each shard's summary. `lock_key` names the device's lock.
// Returns 0, or 130 when interrupted.
int work_on_shards(kernels::Device& device, const SweepPlan& plan, int shards, const std::string& lock_key,
                   const std::string& description, BusyPolicy busy);

}  // namespace shapescope::profiler
