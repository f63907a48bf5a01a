#include "profiler/worker_pool.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "common/shard_manifest.hpp"
#include "common/user_error.hpp"
#include "profiler/device_baseline.hpp"
#include "profiler/shard_plan.hpp"
#include "profiler/sharded_sweep.hpp"

extern char** environ;

namespace shapescope::profiler {

namespace {

constexpr int kExitUserError = 2;
constexpr int kExitInterrupted = 130;
constexpr auto kPollInterval = std::chrono::milliseconds(50);

pid_t start_worker(const std::vector<std::string>& argv, const WorkerSlot& slot) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry; ++entry) {
    if (std::string(*entry).rfind("CUDA_VISIBLE_DEVICES=", 0) != 0) environment.push_back(*entry);
  }
  if (!slot.cuda_visible_devices.empty()) environment.push_back("CUDA_VISIBLE_DEVICES=" + slot.cuda_visible_devices);
  std::vector<char*> c_argv, c_env;
  for (const std::string& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  for (const std::string& entry : environment) c_env.push_back(const_cast<char*>(entry.c_str()));
  c_env.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot start a worker process: fork failed");
  if (pid == 0) {
    ::execve("/proc/self/exe", c_argv.data(), c_env.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace

std::vector<int> parse_gpu_list(const std::string& text, int gpus_present, const std::string& why_none) {
  if (gpus_present == 0) {
    throw UserError(fmt::format("--gpus {}: no GPU here ({}); use --backend cpu, with --workers N for several processes",
                                text, why_none));
  }
  std::vector<int> gpus;
  if (text == "all") {
    for (int gpu = 0; gpu < gpus_present; ++gpu) gpus.push_back(gpu);
    return gpus;
  }
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    const bool digits = !item.empty() && item.size() < 6 && std::all_of(item.begin(), item.end(), ::isdigit);
    const int gpu = digits ? std::stoi(item) : -1;
    if (gpu < 0) throw UserError(fmt::format("--gpus '{}': give all, or GPU indices like 0,1", text));
    if (gpu >= gpus_present) {
      throw UserError(fmt::format("--gpus {}: GPU {} does not exist; this process sees {} GPU(s), 0 to {}", text, gpu,
                                  gpus_present, gpus_present - 1));
    }
    if (std::find(gpus.begin(), gpus.end(), gpu) != gpus.end()) {
      throw UserError(fmt::format("--gpus {}: GPU {} is listed twice; one worker per GPU", text, gpu));
    }
    gpus.push_back(gpu);
  }
  if (gpus.empty() || text.back() == ',') throw UserError(fmt::format("--gpus '{}': give all, or GPU indices like 0,1", text));
  return gpus;
}

int check_request_in_worker(const std::vector<std::string>& worker_argv, const WorkerSlot& slot) {
  std::vector<std::string> argv = worker_argv;
  argv.insert(argv.end(), {"--worker-slot", "0", "--worker-count", "0"});
  const pid_t pid = start_worker(argv, slot);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return kExitInterrupted;
}

PoolRun supervise_workers(const std::vector<std::string>& worker_argv, const std::vector<WorkerSlot>& slots,
                          const std::filesystem::path& out) {
  PoolRun run;
  run.workers.resize(slots.size());
  for (std::size_t slot = 0; slot < slots.size(); ++slot) {
    run.workers[slot].description = slots[slot].description;
    std::filesystem::remove(worker_log_path(out, int(slot)));  // an earlier run's events in this --out
  }
  std::map<pid_t, std::size_t> running;  // pid -> slot
  std::vector<int> restarts(slots.size(), 0);
  auto launch = [&](std::size_t slot) {
    std::vector<std::string> argv = worker_argv;
    argv.insert(argv.end(), {"--worker-slot", std::to_string(slot), "--worker-count", std::to_string(slots.size())});
    const double started = monotonic_seconds();
    const pid_t pid = start_worker(argv, slots[slot]);
    running[pid] = slot;
    run.workers[slot].processes.push_back({int(pid), started, -1, 0});
  };
  for (std::size_t slot = 0; slot < slots.size(); ++slot) launch(slot);

  int& exit_code = run.exit_code;
  bool stopping = false;  // interrupted, or a worker refused its input: no restarts, the others are told to stop
  auto stop_all = [&](int signal) {
    if (stopping) return;
    stopping = true;
    for (const auto& [pid, slot] : running) ::kill(pid, signal);
  };
  while (!running.empty()) {
    if (interrupt_requested()) {
      stop_all(SIGINT);
      exit_code = std::max(exit_code, kExitInterrupted);
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid <= 0) {
      std::this_thread::sleep_for(kPollInterval);
      continue;
    }
    const auto found = running.find(pid);
    if (found == running.end()) continue;
    const std::size_t slot = found->second;
    running.erase(found);
    for (WorkerProcess& process : run.workers[slot].processes)
      if (process.pid == int(pid)) process.ended_s = monotonic_seconds();
    if (WIFEXITED(status)) {
      const int code = WEXITSTATUS(status);
      if (code == kExitUserError) {
        exit_code = std::max(exit_code, kExitUserError);
        stop_all(SIGTERM);
      } else if (code == kExitInterrupted) {
        exit_code = std::max(exit_code, kExitInterrupted);
        stop_all(SIGINT);
      } else if (code != 0) {
        fmt::print(stderr, "profile: the worker on {} failed (exit {})\n", slots[slot].description, code);
        exit_code = std::max(exit_code, 1);
      }
      continue;
    }
    const int signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (stopping) continue;
    if (restarts[slot] >= kMaxWorkerRestarts) {
      fmt::print(stderr, "profile: the worker on {} died (signal {}) {} times; giving up on it, the others go on\n",
                 slots[slot].description, signal, restarts[slot] + 1);
      exit_code = std::max(exit_code, 1);
      continue;
    }
    ++restarts[slot];
    fmt::print(stderr, "profile: the worker on {} died (signal {}); starting it again, it resumes its shard\n",
               slots[slot].description, signal);
    launch(slot);
  }
  for (std::size_t slot = 0; slot < slots.size(); ++slot) read_worker_log(out, int(slot), run.workers[slot]);
  return run;
}

std::optional<ClaimedShard> claim_next_shard(const std::filesystem::path& out, int shards) {
  for (int index = 0; index < shards; ++index) {
    if (shard_complete(out, index, shards)) continue;
    // Claimed for as long as the lock lives; the kernel drops the claim of a worker that dies.
    std::optional<FileLock> claim = FileLock::acquire(out / (shard_folder_name(index, shards) + ".claim"),
                                                      [](const std::string&) {}, [] { return true; });
    if (!claim || shard_complete(out, index, shards)) continue;
    return ClaimedShard{index, std::move(*claim)};
  }
  return std::nullopt;
}

int work_on_shards(kernels::Device& device, const SweepPlan& plan, int workers, int slot, const std::string& lock_key,
                   const std::string& description, BusyPolicy busy) {
  const std::optional<FileLock> device_lock = hold_device(lock_key, description, busy);
  if (!device_lock) return kExitInterrupted;
  SweepPlan queued = plan;
  queued.baseline = measure_device_baseline(device, plan);
  log_worker_ready(plan.out_dir, slot);
  const std::vector<double> shares = work_queue_shares(workers);
  const int shards = int(shares.size());
  while (std::optional<ClaimedShard> claimed = claim_next_shard(plan.out_dir, shards)) {
    if (interrupt_requested()) return kExitInterrupted;
    const double start = monotonic_seconds();
    SweepPlan narrowed = queued;
    narrow_to_shard(narrowed, device.info(), claimed->index, shares);
    const SweepResult result = run_sweep(device, narrowed);
    const double end = monotonic_seconds();
    int64_t measured = 0;
    for (const FileSummary& file : result.files) measured += file.points - file.resumed;
    log_worker_shard(plan.out_dir, slot, claimed->index, measured, start, end);
    fmt::print(stderr, "profile: {} measured shard {} of {}: {} points in {} file(s), {:.1f} s\n", description,
               claimed->index, shards, measured, result.files.size(), end - start);
    if (result.interrupted) return kExitInterrupted;
    mark_shard_complete(narrowed);
  }
  return 0;
}

}  // namespace shapescope::profiler
