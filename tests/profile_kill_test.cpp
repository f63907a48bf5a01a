// `profile` on the CPU backend killed with SIGKILL at random moments and run
// again until it finishes: the final CSV holds each M exactly once, every row
// valid, beside its sidecar, with no temporary or lock file left behind.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "profiler/profile_csv.hpp"
#include "profiler/sidecar.hpp"
#include "tests/profile_cli_support.hpp"

namespace shapescope::profiler {
namespace {

namespace fs = std::filesystem;

using testing_support::start_profile;
using testing_support::wait_for;

class ProfileKill : public testing_support::ProfileCliTest {};

TEST_F(ProfileKill, SigkillAtRandomMomentsThenResumeLeavesEachMOnceAndEveryRowValid) {
  const fs::path out = scratch("out");
  std::string m_list;
  for (int m = 1; m <= 40; ++m) {
    if (m > 1) m_list += ',';
    m_list += std::to_string(m);
  }
  const std::vector<std::string> arguments = {
      "--model", "qwen3_4b", "--module", "o_proj", "--tp", "8", "--backend", "cpu", "--threads", "1", "--kernel",
      "cpu_bf16", "--peak-tflops", "1", "--m-list", m_list, "--warmup", "0", "--min-samples", "5", "--max-samples",
      "5", "--hot", "--out", out.string()};  // about 2 s a whole sweep on 2 busy cores

  std::mt19937 random(17);
  std::uniform_int_distribution<int> delay_ms(20, 600);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int kills = 0, finished = 0;
  while (finished == 0 && std::chrono::steady_clock::now() < deadline) {
    const pid_t pid = start_profile(arguments);
    ASSERT_GT(pid, 0);
    const bool kill_it = kills < 10;
    if (kill_it) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    if (kill_it) ::kill(pid, SIGKILL);
    const int exit_code = wait_for(pid);
    if (exit_code == -SIGKILL) {
      ++kills;
      continue;
    }
    ASSERT_EQ(exit_code, 0) << "a resumed run was refused or failed after " << kills << " kills";
    ++finished;
  }
  ASSERT_EQ(finished, 1) << "the sweep did not finish within the time bound";
  EXPECT_GE(kills, 3) << "too few kills landed to test anything";

  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(out)) files.push_back(entry.path().filename());
  ASSERT_EQ(files.size(), 2u) << "only the CSV and its sidecar: no temporaries, no lock file";
  const fs::path csv = out / "qwen3_4b_o_proj_tp8_N2560_K512_cpu_bf16.csv";
  std::map<int64_t, int> seen;
  for (const ProfileRow& row : read_profile_csv(csv)) {  // throws on any malformed row
    ++seen[row.batch];
    EXPECT_EQ(row.status, "ok") << "M=" << row.batch << ": " << row.note;
    EXPECT_GT(row.kernel_time_us, 0);
  }
  ASSERT_EQ(seen.size(), 40u);
  for (const auto& [m, count] : seen) EXPECT_EQ(count, 1) << "M=" << m;
  EXPECT_TRUE(read_sidecar(csv).has_value());
}

}  // namespace
}  // namespace shapescope::profiler
