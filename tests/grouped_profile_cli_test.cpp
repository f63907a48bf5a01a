// `profile --module experts` end to end on the CPU backend, with a tiny MoE config
// (tests/data/hf_configs/tiny_moe.json: 8 experts of 128, top-2, hidden 256): grouped
// CSVs with the grouped columns, sidecars with the exact group sizes, resume, and the
// bad inputs refused in one line before any work.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
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

const std::string kTinyMoe = SHAPESCOPE_SOURCE_DIR "/tests/data/hf_configs/tiny_moe.json";
const std::string kTiny = "--hf-config " + kTinyMoe + " --model tiny_moe --backend cpu --threads 2 ";
const std::string kQuick = " --min-samples 2 --warmup 0 --max-seconds-per-point 0 --no-warm-up ";

class GroupedProfileCli : public shapescope::testing_support::ProfileCliTest {
 protected:
  std::vector<fs::path> csvs() const {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(out_))
      if (entry.path().extension() == ".csv") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    return files;
  }
  const fs::path out_ = scratch("out");
};

int64_t integer(const shapescope::csv::Table& table, std::size_t row, const char* column) {
  return std::stoll(table.rows[row][std::size_t(table.column(column))]);
}

TEST_F(GroupedProfileCli, ExpertsAtEp2WriteGroupedProfilesWithExactSizes) {
  const std::string arguments =
      kTiny + "--module experts --ep 2 --routing lognormal:1.0 --m-list 1,5,64" + kQuick + "--out " + out_.string();
  const Outcome first = run_profile(arguments);
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  const std::vector<fs::path> files = csvs();
  ASSERT_EQ(files.size(), 2u);  // gate_up and down
  EXPECT_NE(files[0].filename().string().find("tiny_moe_moe_down_proj_ep2_E4_N256_K128_lognormal1_contiguous128_"),
            std::string::npos)
      << files[0];
  EXPECT_NE(files[1].filename().string().find("tiny_moe_moe_gate_up_proj_ep2_E4_N256_K256_"), std::string::npos)
      << files[1];

  std::vector<std::vector<int64_t>> rows_per_file;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    const shapescope::csv::Table table = shapescope::csv::read_file(file);
    ASSERT_EQ(table.rows.size(), 3u);
    fs::path sidecar_path = file;
    std::ifstream sidecar_file(sidecar_path.replace_extension(".json"));
    const nlohmann::json sidecar = nlohmann::json::parse(sidecar_file);
    const nlohmann::json& points = sidecar.at("grouped").at("points");
    ASSERT_EQ(points.size(), 3u);
    EXPECT_EQ(sidecar.at("grouped").at("local_experts"), 4);
    EXPECT_EQ(sidecar.at("grouped").at("routing"), "lognormal:1");
    std::vector<int64_t> useful;
    for (std::size_t i = 0; i < 3; ++i) {
      const std::vector<int64_t> sizes = points[i].at("rows").get<std::vector<int64_t>>();
      ASSERT_EQ(sizes.size(), 4u);
      const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t(0));
      EXPECT_EQ(points[i].at("m"), integer(table, i, "batch"));
      EXPECT_EQ(integer(table, i, "useful_rows"), total);
      EXPECT_LE(total, 2 * integer(table, i, "batch"));  // rank 0's share of tokens x top_k
      EXPECT_EQ(integer(table, i, "groups"), 4);
      EXPECT_EQ(integer(table, i, "rows_max"), *std::max_element(sizes.begin(), sizes.end()));
      const std::string status = table.rows[i][std::size_t(table.column("status"))];
      if (total == 0) {
        EXPECT_EQ(status, "no-rows");
      } else {
        EXPECT_EQ(status, "ok") << table.rows[i][std::size_t(table.column("note"))];
        EXPECT_LT(std::stod(table.rows[i][std::size_t(table.column("rel_err"))]), 1e-2);
        EXPECT_GT(std::stod(table.rows[i][std::size_t(table.column("sol_fraction"))]), 0.0);
        int64_t layout_rows = 0;
        for (const int64_t r : sizes) layout_rows += (r + 127) / 128 * 128;
        EXPECT_EQ(integer(table, i, "padded_rows"), layout_rows - total);
      }
      useful.push_back(total);
    }
    rows_per_file.push_back(useful);
  }
  // gate_up and down see the same tokens routed the same way.
  EXPECT_EQ(rows_per_file[0], rows_per_file[1]);

  const Outcome again = run_profile(arguments);  // resume: nothing left to measure
  ASSERT_EQ(again.exit_code, 0) << again.stderr_text;
  EXPECT_EQ(shapescope::csv::read_file(files[0]).rows.size(), 3u);
}

TEST_F(GroupedProfileCli, BalancedMaskedUnderTpSplitsTokensEvenly) {
  const Outcome outcome = run_profile(kTiny + "--module experts --routing balanced --layout masked --max-m 64 "
                                              "--m-list 8,100" +
                                      kQuick + "--out " + out_.string());
  ASSERT_EQ(outcome.exit_code, 0) << outcome.stderr_text;
  const std::vector<fs::path> files = csvs();
  ASSERT_EQ(files.size(), 2u);
  for (const fs::path& file : files) {
    const shapescope::csv::Table table = shapescope::csv::read_file(file);
    ASSERT_EQ(table.rows.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      const int64_t tokens = integer(table, i, "batch");
      EXPECT_EQ(integer(table, i, "groups"), 8);  // TP: every expert on every GPU
      EXPECT_EQ(integer(table, i, "useful_rows"), tokens * 2);
      EXPECT_LE(integer(table, i, "rows_max") - integer(table, i, "rows_min"), 1);
      EXPECT_EQ(integer(table, i, "padded_rows"), 8 * 64 - tokens * 2);
      EXPECT_EQ(table.rows[i][std::size_t(table.column("layout"))], "masked:64");
      EXPECT_EQ(table.rows[i][std::size_t(table.column("status"))], "ok");
    }
  }
}

TEST_F(GroupedProfileCli, BadInputIsOneLineBeforeAnyWork) {
  const std::string out = " --out " + out_.string();
  expect_user_error(kTiny + "--module experts --ep 3" + out, {"8 experts do not split over ep=3", "--ep 1, 2, 4 or 8"});
  expect_user_error(kTiny + "--module experts --routing lognormal:abc" + out, {"lognormal:abc", "positive number"});
  expect_user_error(kTiny + "--module experts --routing file:/nonexistent.csv" + out, {"/nonexistent.csv", "no such file"});
  expect_user_error(kTiny + "--module experts --m-list 0,4" + out, {"'0'", "positive integer"});
  expect_user_error(kTiny + "--module o_proj --ep 2" + out, {"--ep 2 applies to routed experts", "--module experts"});
  expect_user_error("--model llama3_8b --backend cpu --ep 2" + out, {"--ep 2", "an MoE model"});
  expect_user_error("--model llama3_8b --backend cpu --module experts" + out, {"no routed expert layers"});
  expect_user_error(kTiny + "--module all --routing uniform" + out, {"--routing", "--module experts"});
  expect_user_error(kTiny + "--module experts --layout ragged" + out, {"--layout 'ragged'"});
  expect_user_error(kTiny + "--module experts --align 3" + out, {"--align 3", "power of two"});
  expect_user_error(kTiny + "--module experts --max-m 16" + out, {"--max-m", "--layout masked"});
  expect_user_error(kTiny + "--module experts --layout masked --max-m 4 --m-list 64" + out, {"--max-m 4", "M=64"});
  expect_user_error(kTiny + "--module experts --kernel cpu_fp8_blockscale" + out,
                    {"not a grouped kernel", "cpu_fp8_blockscale_grouped"});
  expect_user_error("--grouped-preset nvfp3 --backend cpu" + out, {"nvfp3", "nvfp4_targets"});
  expect_user_error("--grouped-preset nvfp4_targets --model deepseek_v3 --backend cpu" + out, {"replaces --model"});
  EXPECT_FALSE(fs::exists(out_) && !fs::is_empty(out_));  // nothing written
}

TEST_F(GroupedProfileCli, ScaleBlockCutPointsToExpertParallelism) {
  expect_user_error("--model qwen3_235b_a22b --module experts --tp 8 --backend cpu --out " + out_.string(),
                    {"--ep", "--cut-scale-block allow"});
}

}  // namespace
