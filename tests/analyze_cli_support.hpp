// Runs the built `analyze` binary for the CLI tests: its exit code and its stdout and stderr together,
// through a log file in the test's scratch folder.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/scratch_dir.hpp"

namespace shapescope::testing_support {

struct CliResult {
  int exit_code = -1;
  std::string output;
};

inline std::filesystem::path analyze_binary() { return std::filesystem::path(SHAPESCOPE_BIN_DIR) / "analyze"; }
inline bool analyze_binary_built() { return std::filesystem::exists(analyze_binary()); }

// `command` through the shell, its output into a log in `dir`.
inline CliResult run_command(const ScratchDir& dir, const std::string& command) {
  const std::filesystem::path log = dir.path() / "log.txt";
  const int status = std::system((command + " > " + log.string() + " 2>&1").c_str());
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

inline CliResult run_analyze(const ScratchDir& dir, const std::string& arguments) {
  return run_command(dir, analyze_binary().string() + " " + arguments);
}

// Exit 2 and exactly one line for every user error, parse errors included.
inline void expect_user_error(const CliResult& run, const std::string& fragment) {
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
  EXPECT_NE(run.output.find(fragment), std::string::npos) << fragment << " not in: " << run.output;
  EXPECT_EQ(run.output.find("internal error"), std::string::npos) << run.output;
}

}  // namespace shapescope::testing_support
