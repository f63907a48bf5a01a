// Which shard a process measures: --shard I/N, --shard auto from launcher variables, and the bad
// inputs (I >= N, N = 0, a spec the launcher contradicts) as one-line user errors; --gpus lists.
#include <gtest/gtest.h>

#include <map>

#include "common/user_error.hpp"
#include "profiler/shard_spec.hpp"
#include "profiler/worker_pool.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope::profiler {
namespace {

EnvLookup env_of(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    const auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

std::string user_error_of(const std::string& text, const EnvLookup& env) {
  return testing_support::user_error_of([&] { resolve_shard(text, env); });
}

TEST(ShardSpec, ExplicitShard) {
  const ShardSpec spec = resolve_shard("3/8", env_of({}));
  EXPECT_EQ(spec.index, 3);
  EXPECT_EQ(spec.count, 8);
}

TEST(ShardSpec, BadSpecsAreOneLineUserErrors) {
  for (const char* text : {"8/8", "9/8", "0/0", "1/0", "-1/4", "3", "a/b", "1/", "/4", "1/4/2", ""}) {
    const std::string message = user_error_of(text, env_of({}));
    EXPECT_FALSE(message.empty()) << text;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(user_error_of("8/8", env_of({})).find("0 to N-1 = 7"), std::string::npos);
  EXPECT_NE(user_error_of("0/0", env_of({})).find("give N from 1"), std::string::npos);
}

TEST(ShardSpec, AutoReadsEachLauncher) {
  const std::vector<std::pair<std::map<std::string, std::string>, std::pair<int, int>>> cases = {
      {{{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}}, {1, 4}},
      {{{"PMI_RANK", "2"}, {"PMI_SIZE", "3"}}, {2, 3}},
      {{{"PMIX_RANK", "5"}, {"SLURM_NTASKS", "6"}}, {5, 6}},
      {{{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}, {0, 2}},
      {{{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}, {3, 4}},
      {{{"SLURM_ARRAY_TASK_ID", "12"}, {"SLURM_ARRAY_TASK_MIN", "10"}, {"SLURM_ARRAY_TASK_MAX", "13"}}, {2, 4}},
      // An array task whose srun step runs 2 tasks: the two multiply.
      {{{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}},
       {3, 6}},
      // Inside sbatch with one task, the array alone decides.
      {{{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "3"}, {"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}},
       {2, 3}},
  };
  for (const auto& [variables, expected] : cases) {
    const ShardSpec spec = resolve_shard("auto", env_of(variables));
    EXPECT_EQ(spec.index, expected.first) << spec.source;
    EXPECT_EQ(spec.count, expected.second) << spec.source;
  }
}

TEST(ShardSpec, AutoWithoutLauncherOrWithBadValuesIsRefused) {
  EXPECT_NE(user_error_of("auto", env_of({})).find("no launcher"), std::string::npos);
  EXPECT_NE(user_error_of("auto", env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}})).find("no launcher"),
            std::string::npos);
  EXPECT_NE(user_error_of("auto", env_of({{"OMPI_COMM_WORLD_RANK", "x"}, {"OMPI_COMM_WORLD_SIZE", "2"}}))
                .find("OMPI_COMM_WORLD_RANK='x'"),
            std::string::npos);
  EXPECT_NE(user_error_of("auto", env_of({{"PMI_RANK", "4"}, {"PMI_SIZE", "4"}})).find("0 to N-1"), std::string::npos);
  EXPECT_NE(user_error_of("auto", env_of({{"SLURM_ARRAY_TASK_ID", "1"}})).find("SLURM_ARRAY_TASK_COUNT"),
            std::string::npos);
}

TEST(ShardSpec, ExplicitSpecMustAgreeWithTheLauncher) {
  const auto mpi = env_of({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
  EXPECT_EQ(resolve_shard("1/2", mpi).index, 1);
  const std::string message = user_error_of("0/2", mpi);
  EXPECT_NE(message.find("disagrees"), std::string::npos) << message;
  EXPECT_NE(message.find("1/2"), std::string::npos) << message;
}

TEST(GpuList, AllIndicesAndBadLists) {
  EXPECT_EQ(parse_gpu_list("all", 2, ""), (std::vector<int>{0, 1}));
  EXPECT_EQ(parse_gpu_list("1,0", 4, ""), (std::vector<int>{1, 0}));
  EXPECT_THROW(parse_gpu_list("all", 0, "no CUDA device present"), UserError);
  try {
    parse_gpu_list("0,2", 2, "");
    FAIL();
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("GPU 2 does not exist"), std::string::npos) << error.what();
  }
  for (const char* bad : {"", "0,", ",0", "x", "0,0", "-1", "1.5"}) EXPECT_THROW(parse_gpu_list(bad, 2, ""), UserError) << bad;
}

}  // namespace
}  // namespace shapescope::profiler
