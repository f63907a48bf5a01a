// Which shard of a sweep this process measures: `--shard I/N`, or `--shard auto` from the
// environment a launcher sets (no MPI library is linked: the ranks never talk to each other).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace shapescope::profiler {

struct ShardSpec {
  int index = 0;  // 0-based
  int count = 1;
  std::string source;  // "--shard", or the variables it came from ("OMPI_COMM_WORLD_RANK/SIZE", ...)
};

// Reads one environment variable; nullopt when unset. std::getenv in the CLI, a map in tests.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup process_environment();

// The shard the launcher's environment names, first found of: OpenMPI (OMPI_COMM_WORLD_RANK/SIZE),
// MPICH/Hydra PMI (PMI_RANK/PMI_SIZE), PMIx (PMIX_RANK with one of the sizes), Slurm tasks of srun
// (SLURM_PROCID/SLURM_NTASKS), then Slurm job arrays (SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT,
// or _MIN/_MAX); inside an array task that srun runs with several tasks, the two multiply:
// shard = array index * tasks + task. A launcher with one task names no shard (nullopt).
// Throws UserError on a malformed or inconsistent value.
std::optional<ShardSpec> shard_from_launcher(const EnvLookup& env);

// `--shard` text: "I/N" (0 <= I < N) or "auto". An explicit I/N must agree with the launcher's
// environment when that names a shard. Throws UserError, one line, naming the fix.
ShardSpec resolve_shard(const std::string& text, const EnvLookup& env);

}  // namespace shapescope::profiler
