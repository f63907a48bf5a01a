// Runs the built `profile` binary for the CLI tests: to completion, capturing its exit code, stdout
// and stderr; or in the background (for the kill and signal tests), its output sent to a file. The
// tests' fixture skips where the binary is not built and gives each test a scratch folder.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "tests/scratch_dir.hpp"

namespace shapescope::testing_support {

struct Outcome {
  int exit_code = -1;
  std::string stdout_text, stderr_text;
};

inline std::string profile_binary() { return (std::filesystem::path(SHAPESCOPE_BIN_DIR) / "profile").string(); }
inline bool profile_binary_built() { return std::filesystem::exists(profile_binary()); }

class ProfileCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!profile_binary_built()) GTEST_SKIP() << "profile binary not built";
  }
  // `name` in the test's scratch folder, not created (a refused run must not create its --out).
  std::filesystem::path scratch(const std::string& name) const { return scratch_.path() / name; }

  ScratchDir scratch_;
};

// Runs `binary` with `arguments` (through the shell: quote what it must not split); `env` ("NAME=value ..."):
// variables set for this run only.
inline Outcome run_tool(const std::string& binary, const std::string& arguments, const std::string& env = "") {
  const std::filesystem::path err_file =
      std::filesystem::temp_directory_path() / ("shapescope_cli_stderr_" + std::to_string(::getpid()));
  // `timeout` turns a hang into a failure instead of a stuck test.
  const std::string command =
      "env " + env + " timeout 120 " + binary + " " + arguments + " 2>" + err_file.string();
  Outcome outcome;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return outcome;
  std::array<char, 4096> buffer{};
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) outcome.stdout_text.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  outcome.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_file);
  outcome.stderr_text.assign(std::istreambuf_iterator<char>(err), {});
  std::filesystem::remove(err_file);
  return outcome;
}

inline Outcome run_profile(const std::string& arguments, const std::string& env = "") {
  return run_tool(profile_binary(), arguments, env);
}

// One line on stderr and nothing on stdout, exit 2, mentioning every expected fragment.
inline void expect_user_error(const std::string& arguments, std::initializer_list<const char*> fragments,
                              const std::string& env = "") {
  const Outcome outcome = run_profile(arguments, env);
  EXPECT_EQ(outcome.exit_code, 2) << arguments << "\n" << outcome.stderr_text;
  EXPECT_EQ(outcome.stdout_text, "") << arguments;
  EXPECT_EQ(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n'), 1) << outcome.stderr_text;
  for (const char* fragment : fragments)
    EXPECT_NE(outcome.stderr_text.find(fragment), std::string::npos) << fragment << " not in: " << outcome.stderr_text;
}

// "--m-list 1,2 --out /tmp/x" -> its words (the tests' arguments hold no quoted spaces).
inline std::vector<std::string> words(const std::string& arguments) {
  std::istringstream stream(arguments);
  std::vector<std::string> split;
  for (std::string word; stream >> word;) split.push_back(word);
  return split;
}

// Starts `profile` itself (no shell in between: the pid is the one to signal), stdout and stderr into `output`.
inline pid_t start_profile(const std::vector<std::string>& arguments, const std::string& output = "/dev/null") {
  const std::string binary = profile_binary();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int sink = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(sink, STDOUT_FILENO);
  ::dup2(sink, STDERR_FILENO);
  std::vector<char*> argv = {const_cast<char*>(binary.c_str())};
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  ::execv(binary.c_str(), argv.data());
  ::_exit(127);
}

// Waits for a started process; its exit code, or -signal when a signal ended it.
inline int wait_for(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

}  // namespace shapescope::testing_support
