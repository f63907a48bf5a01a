// `profile`'s scale-out modes, apart from the plain sweep: one shard of a sweep (--shard), one worker per
// GPU of the host (--gpus) or CPU worker processes (--workers), a worker itself (hidden --worker-slot),
// and merging a folder of shards (--merge). profile_main parses; this decides and runs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profiler/device_lock.hpp"
#include "profiler/sweep_setup.hpp"

namespace shapescope::profiler {

struct ScaleOutRequest {
  std::string shard;          // "I/N" | "auto" | "" (not sharded)
  std::string merge;          // a folder of shards to merge
  std::string gpus;           // "all" | "0,1,..." | ""
  int workers = 0;            // CPU worker processes (--backend cpu)
  std::string device_busy = "wait";
  int worker_slot = -1;       // >= 0: this process is a worker started by --gpus/--workers
  int worker_count = 0;       // the workers sharing the queue; 0: only check the request
};

// Runs the scale-out mode `scale_out` asks for and returns its exit code; nullopt for a plain sweep.
// `argv` is the command line (workers rerun it). Throws UserError on bad input, before any work.
std::optional<int> run_scale_out(const ScaleOutRequest& scale_out, ProfileRequest request,
                                 const std::vector<std::string>& argv);

// Holds the GPU a plain or sharded sweep measures on (nothing for the CPU); nullopt when interrupted
// while waiting for it.
std::optional<FileLock> hold_sweep_device(const kernels::Device& device, BusyPolicy busy);

}  // namespace shapescope::profiler
