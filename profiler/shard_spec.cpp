#include "profiler/shard_spec.hpp"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope::profiler {

namespace {

constexpr int kMaxShards = 1000000;

std::optional<int> parse_count(const std::string& text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

int env_int(const EnvLookup& env, const std::string& name) {
  const std::optional<std::string> text = env(name);
  const std::optional<int> value = text ? parse_count(*text) : std::nullopt;
  if (!value) {
    throw UserError(fmt::format("--shard auto: {}='{}' is not a whole number >= 0; unset it or give --shard I/N", name,
                                text.value_or("")));
  }
  return *value;
}

ShardSpec checked(int index, int count, const std::string& source) {
  if (count < 1 || count > kMaxShards) {
    throw UserError(fmt::format("{}: {} shards; give N from 1 to {}", source, count, kMaxShards));
  }
  if (index < 0 || index >= count) {
    throw UserError(fmt::format("{}: shard {} of {}; the index runs from 0 to N-1 = {}", source, index, count, count - 1));
  }
  return {index, count, source};
}

std::optional<ShardSpec> rank_and_size(const EnvLookup& env, const std::string& rank, const std::string& size) {
  if (!env(rank) || !env(size)) return std::nullopt;
  return checked(env_int(env, rank), env_int(env, size), rank + "/" + size);
}

std::optional<ShardSpec> mpi_rank(const EnvLookup& env) {
  if (auto spec = rank_and_size(env, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")) return spec;
  if (auto spec = rank_and_size(env, "PMI_RANK", "PMI_SIZE")) return spec;
  for (const char* size : {"PMIX_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    if (auto spec = rank_and_size(env, "PMIX_RANK", size)) return spec;
  }
  return rank_and_size(env, "SLURM_PROCID", "SLURM_NTASKS");
}

std::optional<ShardSpec> slurm_array_task(const EnvLookup& env) {
  if (!env("SLURM_ARRAY_TASK_ID")) return std::nullopt;
  const int id = env_int(env, "SLURM_ARRAY_TASK_ID");
  const int min = env("SLURM_ARRAY_TASK_MIN") ? env_int(env, "SLURM_ARRAY_TASK_MIN") : 0;
  int count = 0;
  if (env("SLURM_ARRAY_TASK_COUNT")) {
    count = env_int(env, "SLURM_ARRAY_TASK_COUNT");
  } else if (env("SLURM_ARRAY_TASK_MAX")) {
    count = env_int(env, "SLURM_ARRAY_TASK_MAX") - min + 1;
  } else {
    throw UserError("--shard auto: SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT or _MAX; give --shard I/N");
  }
  // Array indices with a step (--array=0-30:10) do not map onto 0..N-1; those need --shard I/N.
  return checked(id - min, count, "SLURM_ARRAY_TASK_ID/COUNT");
}

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

std::optional<ShardSpec> shard_from_launcher(const EnvLookup& env) {
  std::optional<ShardSpec> task = mpi_rank(env);
  if (task && task->count == 1) task.reset();
  std::optional<ShardSpec> array = slurm_array_task(env);
  if (array && array->count == 1) array.reset();
  if (task && array) {
    return checked(array->index * task->count + task->index, array->count * task->count,
                   array->source + " x " + task->source);
  }
  return task ? task : array;
}

ShardSpec resolve_shard(const std::string& text, const EnvLookup& env) {
  const std::optional<ShardSpec> launcher = shard_from_launcher(env);
  if (text == "auto") {
    if (!launcher) {
      throw UserError("--shard auto: no launcher names a shard here (OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, "
                      "PMIX_RANK, SLURM_PROCID/NTASKS, SLURM_ARRAY_TASK_ID/COUNT with more than one task); run it "
                      "under mpirun, srun or a Slurm array, or give --shard I/N");
    }
    return *launcher;
  }
  const std::size_t slash = text.find('/');
  const std::optional<int> index = slash == std::string::npos ? std::nullopt : parse_count(text.substr(0, slash));
  const std::optional<int> count = slash == std::string::npos ? std::nullopt : parse_count(text.substr(slash + 1));
  if (!index || !count) {
    throw UserError(fmt::format("--shard '{}': give I/N (shard I of N, 0 <= I < N, e.g. 0/4) or auto", text));
  }
  const ShardSpec spec = checked(*index, *count, "--shard " + text);
  if (launcher && (launcher->index != spec.index || launcher->count != spec.count)) {
    throw UserError(fmt::format("--shard {} disagrees with the launcher's environment ({} say shard {}/{}); use "
                                "--shard auto, or run outside the launcher",
                                text, launcher->source, launcher->index, launcher->count));
  }
  return spec;
}

}  // namespace shapescope::profiler
