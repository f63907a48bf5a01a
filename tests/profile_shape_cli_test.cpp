// `profile --shape N,K[,batch]` through the built binary on the CPU backend: raw shapes sweep into
// shape-named files with their sidecar, resume, shard and merge like a model's layers; bad shapes and
// model options beside --shape are one line and exit 2 before any work.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/csv.hpp"
#include "tests/profile_cli_support.hpp"

namespace {

namespace fs = std::filesystem;

using shapescope::testing_support::expect_user_error;
using shapescope::testing_support::Outcome;
using shapescope::testing_support::run_profile;

class ProfileShapeCli : public shapescope::testing_support::ProfileCliTest {
 protected:
  std::string sweep(const std::string& m_list) const {
    return "--shape 256,128 --shape 128,256,2 --backend cpu --threads 1 --kernel cpu_bf16 --peak-tflops 1 --warmup 0 "
           "--min-samples 2 --max-samples 2 --hot --m-list " + m_list + " --out " + out_.string();
  }
  const fs::path out_ = scratch("out");
};

TEST_F(ProfileShapeCli, BadShapesAndModelOptionsBesideThemAreOneLineBeforeAnyWork) {
  const std::string cpu = " --backend cpu --m-list 1 --peak-tflops 1 --out " + out_.string();
  expect_user_error("--shape 4096" + cpu, {"--shape '4096'", "N,K or N,K,batch"});
  expect_user_error("--shape 4096,abc" + cpu, {"'abc' is not a whole number"});
  expect_user_error("--shape 0,4096" + cpu, {"'0' is not a whole number from 1"});
  expect_user_error("--shape 4096,4096,0" + cpu, {"--shape '4096,4096,0'"});
  expect_user_error("--shape 4096,-1" + cpu, {"'-1'"});
  expect_user_error("--shape 99999999999999999999,8" + cpu, {"'99999999999999999999'"});
  // N x K overflows the byte counts: refused before anything is allocated.
  expect_user_error("--shape 4294967296,4294967296" + cpu, {"--shape 4294967296,4294967296,1", "give a smaller shape"});
  expect_user_error("--shape 65536,65536,65537" + cpu, {"exceed", "give a smaller shape"});
  // 2^48 bytes of weights: addressable, but more than any device's memory.
  expect_user_error("--shape 65536,65536,65536" + cpu, {"more than the device's", "give a smaller shape"});
  // A shape names the GEMM itself: the options that pick or split a model's layers are refused beside it.
  for (const char* model_option : {"--model llama3_8b", "--module o_proj", "--tp 2", "--ep 8", "--module experts",
                                   "--grouped-preset nvfp4_targets", "--routing uniform", "--hf-config config.json"}) {
    expect_user_error(std::string("--shape 256,128 ") + model_option + cpu, {"--shape N,K[,batch]", "drop --shape"});
  }
  expect_user_error("--backend cpu", {"--model is required", "--shape N,K[,batch]"});
  EXPECT_FALSE(fs::exists(out_)) << "a refused run created its output folder";
}

TEST_F(ProfileShapeCli, RawShapesSweepIntoShapeNamedFilesAndResume) {
  const Outcome first = run_profile(sweep("1,3"));
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  EXPECT_NE(first.stderr_text.find("2 M values x 1 kernel(s) x 2 shape(s)"), std::string::npos) << first.stderr_text;
  const fs::path flat = out_ / "shape_N256_K128_cpu_bf16.csv";
  const fs::path batched = out_ / "shape_N128_K256_B2_cpu_bf16.csv";
  ASSERT_TRUE(fs::exists(flat) && fs::exists(batched)) << first.stdout_text;
  const shapescope::csv::Table table = shapescope::csv::read_file(batched);
  ASSERT_EQ(table.rows.size(), 2u);
  for (const auto& row : table.rows) {
    EXPECT_EQ(row[table.column("n")], "128");
    EXPECT_EQ(row[table.column("k")], "256");
    EXPECT_EQ(row[table.column("batch_count")], "2");
    EXPECT_EQ(row[table.column("status")], "ok") << row[table.column("note")];
  }
  std::ifstream sidecar_file(out_ / "shape_N128_K256_B2_cpu_bf16.json");
  const nlohmann::json sidecar = nlohmann::json::parse(sidecar_file);
  EXPECT_EQ(sidecar["problem"]["raw_shape"], true);
  EXPECT_EQ(sidecar["problem"]["model"], "");
  EXPECT_EQ(sidecar["problem"]["module"], "");
  EXPECT_EQ(sidecar["problem"]["n"], 128);
  EXPECT_EQ(sidecar["problem"]["batch_count"], 2);

  // Resume: M=1 and 3 are kept as they were, only M=2 is measured.
  const std::vector<std::string> first_row = shapescope::csv::read_file(flat).rows.at(0);
  const Outcome more = run_profile(sweep("1,2,3"));
  ASSERT_EQ(more.exit_code, 0) << more.stderr_text;
  const shapescope::csv::Table resumed = shapescope::csv::read_file(flat);
  ASSERT_EQ(resumed.rows.size(), 3u);
  EXPECT_EQ(resumed.rows[0], first_row);
  EXPECT_EQ(resumed.rows[1][0], "2");
}

TEST_F(ProfileShapeCli, RawShapesShardAndMergeIntoTheSamePointSet) {
  for (const char* shard : {"0/2", "1/2"}) {
    const Outcome part = run_profile(sweep("1,2,3,4") + " --shard " + shard);
    ASSERT_EQ(part.exit_code, 0) << part.stderr_text;
  }
  const Outcome merged = run_profile("--merge " + out_.string());
  ASSERT_EQ(merged.exit_code, 0) << merged.stderr_text;
  EXPECT_NE((merged.stdout_text + merged.stderr_text).find("complete (8 points in 2 shards)"), std::string::npos)
      << merged.stdout_text << merged.stderr_text;
  for (const char* name : {"shape_N256_K128_cpu_bf16.csv", "shape_N128_K256_B2_cpu_bf16.csv"})
    EXPECT_EQ(shapescope::csv::read_file(out_ / name).rows.size(), 4u) << name;
}

}  // namespace
