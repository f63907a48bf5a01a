#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/csv.hpp"
#include "common/profile_schema.hpp"
#include "common/m_search_grid.hpp"
#include "profiler/replay.hpp"
#include "tests/profile_cli_support.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope::profiler {
namespace {

using testing_support::ScratchDir;
using testing_support::user_error_of;

// A study CSV over M = 4..4096 step 4 whose kernel is 30% slower from M=2000 on (another kernel).
std::string study_profile() {
  std::string text = "batch,kernel_time,flops,utils,kernel_name\n";
  for (int64_t m = 4; m <= 4096; m += 4) {
    const double time = (10.0 + double(m) / 50) * (m >= 2000 ? 1.3 : 1.0);
    const double tflops = 2.0 * double(m) * 4096 * 4096 / time / 1e6;
    text += fmt::format("{},{},{},{},{}\n", m, time, tflops, tflops / 1000, m >= 2000 ? "slow" : "fast");
  }
  return text;
}

TEST(Replay, AnswersEachMFromTheRecordedRow) {
  ScratchDir dir;
  const auto csv = dir.write("study_K4096_N4096.csv", study_profile());
  const RecordedProfile recorded = read_recorded_profile(csv);
  EXPECT_EQ(recorded.m_values().size(), 1024u);
  const SearchPoint point = replay_point(recorded, 2000);
  EXPECT_TRUE(point.measured);
  EXPECT_DOUBLE_EQ(point.time_us, (10.0 + 2000.0 / 50) * 1.3);
  EXPECT_EQ(point.kernel_name, "slow");
  EXPECT_FALSE(replay_point(recorded, 2001).measured);  // not in the file: unsupported
}

// The study profile replayed from `dir` into dir/replay.
ReplayResult replay_study(const ScratchDir& dir, MSearch mode) {
  ReplayRequest request;
  request.recorded = dir.write("study_K4096_N4096.csv", study_profile());
  request.out_dir = dir.path() / "replay";
  request.search.mode = mode;
  return run_replay(request);
}

TEST(Replay, GridReplayWritesTheRecordedRowsUnderTheRecordedName) {
  ScratchDir dir;
  const ReplayResult result = replay_study(dir, MSearch::grid);
  EXPECT_EQ(result.csv, dir.path() / "replay" / "study_K4096_N4096.csv");
  EXPECT_EQ(result.points, 1024);
  std::ifstream in(result.csv);
  std::stringstream written;
  written << in.rdbuf();
  EXPECT_EQ(csv::parse(written.str(), "replayed").rows, csv::parse(study_profile(), "recorded").rows);
}

TEST(Replay, AdaptiveReplayMeasuresFewerPointsAndFindsTheKernelSwitch) {
  ScratchDir dir;
  const ReplayResult result = replay_study(dir, MSearch::adaptive);
  ASSERT_TRUE(result.adaptive);
  // The slower kernel's stretch (M >= 2000, half the grid) stays low to the end: it is covered every third M, with
  // the remainders of the split plans (a measured M before the stretch and the rest) that would beat it.
  EXPECT_LT(result.points, 1024 * 2 / 5);
  const RecordedProfile replayed = read_recorded_profile(result.csv);
  EXPECT_TRUE(replayed.points.count(1996) && replayed.points.count(2000));
  // The sidecar says it was adaptive and which grid it refined.
  std::ifstream sidecar(dir.path() / "replay" / "study_K4096_N4096.json");
  const nlohmann::json json = nlohmann::json::parse(sidecar);
  EXPECT_EQ(json["m_search"]["mode"], "adaptive");
  EXPECT_EQ(json["m_search"]["grid_points"], 1024);
  EXPECT_EQ(json["m_search"]["measured_points"], result.points);
  const RecordedProfile recorded = read_recorded_profile(dir.path() / "study_K4096_N4096.csv");
  EXPECT_EQ(grid_from_runs(json["m_search"]["grid"]), recorded.m_values());
}

TEST(Replay, AShapescopeProfileKeepsItsColumnsAndAMissingMIsUnsupported) {
  ScratchDir dir;
  std::string text = csv::format_row(profile_columns());
  for (int64_t m : {1, 2, 4}) {
    ProfileRow row;
    row.batch = row.m = m;
    row.n = row.k = 128;
    row.kernel_time_us = 10;
    row.utils = 0.01 * double(m);
    row.kernel_name = "k";
    row.ci95_us = 0.1;
    text += csv::format_row(to_fields(row));
  }
  const auto csv = dir.write("shape_N128_K128_cpu_bf16.csv", text);
  ReplayRequest request;
  request.recorded = csv;
  request.out_dir = dir.path() / "out";
  request.m_values = std::vector<int64_t>{1, 3, 4};
  const ReplayResult result = run_replay(request);
  EXPECT_EQ(result.grid_points, 3);
  const RecordedProfile replayed = read_recorded_profile(result.csv);
  ASSERT_EQ(replayed.m_values(), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_TRUE(replayed.shapescope);
  EXPECT_FALSE(replayed.points.at(3).measured);
  const csv::Table table = csv::read_file(result.csv);
  EXPECT_EQ(table.rows[1][std::size_t(table.column("status"))], kStatusUnsupported);
  EXPECT_NEAR(replay_point(replayed, 4).rel_noise, 0.01, 1e-12);
}

TEST(Replay, RefusesToWriteOverTheFileItReplays) {
  ScratchDir dir;
  const auto csv = dir.write("study_K4096_N4096.csv", study_profile());
  ReplayRequest request;
  request.recorded = csv;
  request.out_dir = dir.path();
  EXPECT_NE(user_error_of([&] { run_replay(request); }).find("would replace the recorded file"), std::string::npos);
  EXPECT_EQ(csv::read_file(csv).rows.size(), 1024u);
  request.recorded = dir.path() / "absent.csv";
  EXPECT_NE(user_error_of([&] { run_replay(request); }).find("no such file"), std::string::npos);
}

// A batch that is no int64 (NaN, past its end) is refused by value, never cast: the cast is undefined for it.
TEST(Replay, RefusesABatchThatIsNoInt64) {
  ScratchDir dir;
  for (const char* batch : {"nan", "-nan", "inf", "1e300", "9223372036854775807", "0.5", "0"}) {
    const auto csv =
        dir.write("study.csv", fmt::format("batch,kernel_time,flops,utils\n1,2,3,0.1\n{},2,3,0.1\n", batch));
    EXPECT_NE(user_error_of([&] { read_recorded_profile(csv); }).find("is not an M"), std::string::npos) << batch;
  }
  const auto csv = dir.write("study.csv", "batch,kernel_time,flops,utils\n1,2,3,0.1\n4611686018427387904,2,3,0.1\n");
  EXPECT_EQ(read_recorded_profile(csv).m_values().back(), int64_t(1) << 62);
}

// An adaptive replay over M options up to int64's end: the search's coarse pass ends; the M the file lacks are
// unsupported rows.
TEST(Replay, AdaptiveReplayOverMUpToInt64sEndEnds) {
  ScratchDir dir;
  ReplayRequest request;
  request.recorded = dir.write("study.csv", "batch,kernel_time,flops,utils\n1,2,3,0.1\n2,2,3,0.1\n");
  request.out_dir = dir.path() / "replay";
  request.search.mode = MSearch::adaptive;
  request.m_values = std::vector<int64_t>{1, 2, int64_t(1) << 62, INT64_MAX};
  const ReplayResult result = run_replay(request);
  EXPECT_EQ(result.points, 4);
}

class ReplayCliTest : public testing_support::ProfileCliTest {};

TEST_F(ReplayCliTest, ReplaysWithoutABackendAndRefusesAdaptiveBesideShards) {
  const auto csv = scratch_.write("study_K4096_N4096.csv", study_profile());
  const std::string out = scratch("replay").string();
  const auto outcome = testing_support::run_profile("--replay " + csv.string() + " --m-search adaptive --out " + out);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.stderr_text;
  EXPECT_NE(outcome.stdout_text.find("of a grid of 1024"), std::string::npos) << outcome.stdout_text;
  EXPECT_TRUE(std::filesystem::exists(scratch("replay") / "study_K4096_N4096.csv"));

  testing_support::expect_user_error("--replay " + csv.string() + " --out " + scratch_.path().string(),
                                     {"would replace the recorded file"});
  testing_support::expect_user_error("--backend cpu --shape 64,64 --m-search adaptive --shard 0/2 --out " + out,
                                     {"--m-search adaptive runs in one process"});
  testing_support::expect_user_error("--backend cpu --shape 64,64 --m-search adaptive --repeat 3 --out " + out,
                                     {"--repeat 3 with --m-search adaptive"});
  testing_support::expect_user_error("--backend cpu --shape 64,64 --max-points 10 --out " + out,
                                     {"add --m-search adaptive"});
  testing_support::expect_user_error("--backend cpu --shape 64,64 --m-search dense --out " + out, {"--m-search 'dense'"});
}

}  // namespace
}  // namespace shapescope::profiler
