// Inputs a new user tries that the profile CLI once crashed on, hung on or silently accepted: each now runs
// correctly or ends in one line and exit 2 before any work.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/csv.hpp"
#include "tests/profile_cli_support.hpp"

namespace shapescope::testing_support {
namespace {

namespace fs = std::filesystem;

class HostileInputs : public ProfileCliTest {
 protected:
  const std::string fast = " --peak-tflops 1 --min-samples 1 --max-samples 1 --warmup 0 --threads 1 --out " +
                           scratch("out").string();
};

TEST_F(HostileInputs, SteepZipfRoutingRunsInsteadOfCorruptingTheHeap) {
  // (moe_routing_test covers zipf:400 and zipf:1000 too; here the whole CLI path, at EP 8 to keep it short.)
  const Outcome run = run_profile("--model qwen3_30b_a3b --module experts --backend cpu --m-list 1 --ep 8 "
                                  "--routing zipf:1e308" + fast);
  EXPECT_EQ(run.exit_code, 0) << run.stderr_text;
}

TEST_F(HostileInputs, GroupedSweepsRefuseMoreTokensThanTheyCanRouteAtOnce) {
  for (const char* m : {"8589934592", "1099511627776", "9223372036854775807"}) {
    const auto start = std::chrono::steady_clock::now();
    expect_user_error(std::string("--model qwen3_30b_a3b --module experts --backend cpu --m-list ") + m + fast,
                      {"grouped sweep routes at most 16777216 tokens"});
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30);
  }
}

TEST_F(HostileInputs, OptionsThatWereSilentlyAcceptedAreRefused) {
  const std::string sweep = "--backend cpu --shape 64,64 --m-list 1" + fast;
  expect_user_error(sweep + " --workers 0", {"--workers"});
  expect_user_error(sweep + " --shard ''", {"--shard", "empty"});
  expect_user_error("--model qwen3_30b_a3b --module experts --backend cpu --m-list 1 --align 0" + fast, {"--align"});
  expect_user_error(sweep + " --m-preset nope", {"--m-preset", "--m-list"});
  expect_user_error("--merge " + scratch("out").string() + " --model llama3_8b", {"--merge", "--model"});
  EXPECT_FALSE(fs::exists(scratch("out")));
}

TEST_F(HostileInputs, HfConfigSizesBeyondAnyModelAreRefused) {
  std::ifstream in(fs::path(SHAPESCOPE_SOURCE_DIR) / "tests" / "data" / "hf_configs" / "llama3_8b.json");
  nlohmann::json config = nlohmann::json::parse(in);
  config["hidden_size"] = INT64_MAX;
  const fs::path path = scratch("config.json");
  std::ofstream(path) << config.dump();
  expect_user_error("--model big --hf-config " + path.string() + " --backend cpu --m-list 1" + fast,
                    {"'hidden_size' is 9223372036854775807; expected at most 1048576"});
}

// Rows of one pass and medians of two must not share a file: a resume under another --repeat is refused, one
// under the same --repeat adds rows of as many passes as the file holds.
TEST_F(HostileInputs, ResumeKeepsEveryRowOfOneFileAtOnePassCount) {
  const std::string sweep = "--backend cpu --shape 64,64 --kernel cpu_bf16" + fast;
  ASSERT_EQ(run_profile(sweep + " --m-list 1,2 --repeat 2").exit_code, 0);
  expect_user_error(sweep + " --m-list 1,2,3,4", {"cannot resume", "passes: \"2\" in the file, (none) in this run"});
  const Outcome resumed = run_profile(sweep + " --m-list 1,2,3,4 --repeat 2");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.stderr_text;
  const fs::path csv = scratch("out") / "shape_N64_K64_cpu_bf16.csv";
  ASSERT_TRUE(fs::exists(csv));
  const csv::Table table = csv::read_file(csv);
  ASSERT_GE(table.column("passes"), 0);
  for (const auto& row : table.rows) EXPECT_EQ(row[std::size_t(table.column("passes"))], "2");
  EXPECT_EQ(table.rows.size(), 4u);
}

}  // namespace
}  // namespace shapescope::testing_support
