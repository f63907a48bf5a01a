#include "profiler/scale_out.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "common/user_error.hpp"
#include "profiler/shard_plan.hpp"
#include "profiler/shard_spec.hpp"
#include "profiler/sharded_sweep.hpp"
#include "profiler/summary_table.hpp"
#include "profiler/worker_pool.hpp"

namespace shapescope::profiler {

namespace {

constexpr int kExitInterrupted = 130;
constexpr int kExitIncomplete = 1;
constexpr int kMaxCpuWorkers = 256;

// Prints what a folder of shards holds after merging, file by file; 0 when every planned point is in it.
int merge_and_report(const std::filesystem::path& folder) {
  const MergeResult merged = merge_shards(folder);
  if (!merged.files.empty()) fmt::print("{}", file_table(merged.files));
  fmt::print("merge: {} file(s) written to {}; {}\n", merged.written.size(), folder.string(),
             merged.shards.missing_summary());
  return merged.shards.missing_points() == 0 ? 0 : kExitIncomplete;
}

// GPU `index` as this process numbers it, in the numbering a child given CUDA_VISIBLE_DEVICES needs:
// the index-th entry of our own CUDA_VISIBLE_DEVICES when it is set (it may list UUIDs).
std::string visible_device(int index) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (!visible || !*visible) return std::to_string(index);
  std::stringstream entries(visible);
  std::string entry;
  for (int i = 0; std::getline(entries, entry, ','); ++i)
    if (i == index) return entry;
  return std::to_string(index);
}

int run_supervisor(const ScaleOutRequest& scale_out, const ProfileRequest& request,
                   const std::vector<std::string>& argv) {
  const std::string option = scale_out.gpus.empty() ? "--workers" : "--gpus";
  if (!scale_out.gpus.empty() && scale_out.workers > 0) {
    throw UserError("--gpus and --workers: give one (--gpus for GPUs, --workers N for CPU processes)");
  }
  if (!scale_out.shard.empty()) {
    throw UserError(fmt::format("--shard and {}: give one ({} cuts the sweep into shards itself)", option, option));
  }
  if (request.out.empty()) {
    throw UserError(fmt::format("{} needs --out DIR: the workers' shards and the merged profile go there", option));
  }
  parse_busy_policy(scale_out.device_busy);
  std::vector<WorkerSlot> slots;
  if (!scale_out.gpus.empty()) {
    if (request.backend == "cpu") throw UserError("--gpus with --backend cpu: use --workers N for CPU processes");
    for (int gpu : parse_gpu_list(scale_out.gpus, kernels::cuda_device_count(), kernels::cuda_unavailable_reason()))
      slots.push_back({visible_device(gpu), fmt::format("GPU {}", gpu)});
  } else {
    if (request.backend != "cpu") {
      throw UserError("--workers N starts CPU worker processes: add --backend cpu (on GPUs use --gpus)");
    }
    if (scale_out.workers > kMaxCpuWorkers) {
      throw UserError(fmt::format("--workers {}: give 1 to {}", scale_out.workers, kMaxCpuWorkers));
    }
    for (int worker = 0; worker < scale_out.workers; ++worker)
      slots.push_back({"", fmt::format("CPU worker {}", worker)});
  }
  ensure_writable_directory(request.out);
  const double start = monotonic_seconds();
  // Every worker would refuse a bad request alike: one checks it first, so the error is said once.
  if (const int checked = check_request_in_worker(argv, slots.front()); checked != 0) return checked;
  const double checked = monotonic_seconds();
  fmt::print(stderr, "profile: {} worker process(es), a queue of {} shards -> {}\n", slots.size(),
             work_queue_shares(int(slots.size())).size(), request.out);
  const PoolRun run = supervise_workers(argv, slots, request.out);
  const double measured = monotonic_seconds();
  const int code = run.exit_code != 0 ? run.exit_code : merge_and_report(request.out);
  // Where the time went: one row per worker, then the run's phases.
  fmt::print("{}", worker_table(run.workers));
  fmt::print("wall {:.1f} s: request check {:.1f} s, workers {:.1f} s, merge {:.1f} s\n", monotonic_seconds() - start,
             checked - start, measured - checked, run.exit_code != 0 ? 0.0 : monotonic_seconds() - measured);
  return code;
}

// Shards cut a dense sweep's (kernel, shape, M) points; grouped sweeps are not cut yet.
void refuse_grouped(const SweepSetup& setup) {
  if (setup.grouped)
    throw UserError("--shard, --gpus and --workers split dense sweeps; run grouped sweeps (--module experts, "
                    "--grouped-preset) without them");
}

int run_worker(const ScaleOutRequest& scale_out, const ProfileRequest& request) {
  if (scale_out.worker_count < 0) throw UserError("--worker-count: give 0 (check the request only) or more");
  SweepSetup setup = prepare_sweep(request);
  refuse_grouped(setup);
  if (interrupt_requested()) return kExitInterrupted;
  if (scale_out.worker_count == 0) return 0;  // check_request_in_worker: the request is sound
  const kernels::DeviceInfo info = setup.device->info();
  const bool gpu = setup.device->kind() == kernels::BackendKind::cuda;
  const std::string key = gpu ? info.uuid : fmt::format("cpu-worker-{}", scale_out.worker_slot);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string description =
      gpu ? fmt::format("GPU {} ({})", visible ? visible : "0", info.uuid) : fmt::format("CPU worker {}", scale_out.worker_slot);
  return work_on_shards(*setup.device, setup.plan, scale_out.worker_count, scale_out.worker_slot, key, description,
                        parse_busy_policy(scale_out.device_busy));
}

int run_shard(const ScaleOutRequest& scale_out, const ProfileRequest& request) {
  const ShardSpec spec = resolve_shard(scale_out.shard, process_environment());
  const BusyPolicy busy = parse_busy_policy(scale_out.device_busy);
  SweepSetup setup = prepare_sweep(request);
  refuse_grouped(setup);
  if (interrupt_requested()) return kExitInterrupted;
  const std::filesystem::path out = setup.plan.out_dir;
  narrow_to_shard(setup.plan, setup.device->info(), spec.index, even_shares(spec.count));
  const std::optional<FileLock> device_lock = hold_sweep_device(*setup.device, busy);
  if (interrupt_requested()) return kExitInterrupted;
  int64_t points = 0;
  for (const auto& [file, m_values] : *setup.plan.shard_m_values) points += int64_t(m_values.size());
  fmt::print(stderr, "profile: {}; shard {} of {} ({}): {} points -> {}\n", setup.backend_reason, spec.index,
             spec.count, spec.source, points, setup.plan.out_dir.string());
  const SweepResult result = run_sweep(*setup.device, setup.plan);
  fmt::print("{}", summary_table(result));
  if (result.interrupted) {
    fmt::print(stderr, "profile: interrupted; measured points are saved, run the same command to resume\n");
    return kExitInterrupted;
  }
  mark_shard_complete(setup.plan);
  fmt::print(stderr, "profile: shard {} of {} complete; once every shard is, `profile --merge {}` joins them\n",
             spec.index, spec.count, out.string());
  return 0;
}

}  // namespace

std::optional<FileLock> hold_sweep_device(const kernels::Device& device, BusyPolicy busy) {
  const kernels::DeviceInfo info = device.info();
  if (device.kind() != kernels::BackendKind::cuda || info.uuid.empty()) return std::nullopt;
  return hold_device(info.uuid, fmt::format("{} {}", info.name, info.uuid), busy);
}

std::optional<int> run_scale_out(const ScaleOutRequest& scale_out, ProfileRequest request,
                                 const std::vector<std::string>& argv) {
  if (!scale_out.merge.empty()) return merge_and_report(scale_out.merge);
  if (scale_out.worker_slot >= 0) return run_worker(scale_out, request);
  if (!scale_out.gpus.empty() || scale_out.workers != 0) {
    if (scale_out.workers < 0) throw UserError(fmt::format("--workers {}: give 1 or more", scale_out.workers));
    return run_supervisor(scale_out, request, argv);
  }
  if (!scale_out.shard.empty()) return run_shard(scale_out, request);
  return std::nullopt;
}

}  // namespace shapescope::profiler
