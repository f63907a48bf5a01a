// Ctrl-C and SIGTERM at any moment of `profile`: its handlers are installed
// before setup does anything, and setup (the CPU's 3 s peak measurement
// included) stops soon after the signal, exiting 130 instead of dying.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/profile_cli_support.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using shapescope::testing_support::start_profile;
using shapescope::testing_support::wait_for;

// Whether `pid` has a handler for `signal` (the SigCgt mask of /proc/<pid>/status).
bool catches(pid_t pid, int signal) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigCgt:", 0) != 0) continue;
    const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
    return (mask >> (signal - 1)) & 1;
  }
  return false;
}

class ProfileSignals : public shapescope::testing_support::ProfileCliTest {
 protected:
  // No --peak-tflops: the CPU's peak is measured for 3 s at the start of the sweep, on all cores so that the
  // sgemm in flight when the signal comes is short.
  std::vector<std::string> arguments() const {
    return {"--model", "qwen3_4b", "--module", "o_proj", "--tp", "8", "--backend", "cpu", "--kernel", "cpu_bf16",
            "--m-list", "1,2", "--out", out_.string()};
  }
  const fs::path out_ = scratch("out");
};

TEST_F(ProfileSignals, HandlersComeBeforeSetupAndASignalThenEndsItWith130) {
  const pid_t pid = start_profile(arguments());
  ASSERT_GT(pid, 0);
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (!catches(pid, SIGINT) && Clock::now() < give_up) std::this_thread::sleep_for(std::chrono::microseconds(200));
  // Setup creates --out at its end: the handler must already be there.
  EXPECT_FALSE(fs::exists(out_)) << "setup ran before the handlers were installed";
  ::kill(pid, SIGINT);
  const auto signalled = Clock::now();
  EXPECT_EQ(wait_for(pid), 130);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - signalled).count(), 2.5) << "setup ignored the interrupt";
}

TEST_F(ProfileSignals, SigtermDuringThePeakMeasurementStopsWithinASecond) {
  const pid_t pid = start_profile(arguments());
  ASSERT_GT(pid, 0);
  const auto give_up = Clock::now() + std::chrono::seconds(10);
  while (!fs::exists(out_) && Clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // inside the 3 s peak measurement
  ::kill(pid, SIGTERM);
  const auto signalled = Clock::now();
  EXPECT_EQ(wait_for(pid), 130);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - signalled).count(), 2.5)
      << "the peak measurement ran on after the signal (it takes 3 s)";
}

}  // namespace
