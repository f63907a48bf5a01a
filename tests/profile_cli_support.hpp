// Runs the built `profile` binary and captures its exit code, stdout and stderr (CLI tests).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

namespace shapescope::testing_support {

struct Outcome {
  int exit_code = -1;
  std::string stdout_text, stderr_text;
};

inline bool profile_binary_built() { return std::filesystem::exists(std::filesystem::path(SHAPESCOPE_BIN_DIR) / "profile"); }

inline Outcome run_profile(const std::string& arguments) {
  const std::filesystem::path binary = std::filesystem::path(SHAPESCOPE_BIN_DIR) / "profile";
  const std::filesystem::path err_file =
      std::filesystem::temp_directory_path() / ("shapescope_cli_stderr_" + std::to_string(::getpid()));
  // `timeout` turns a hang into a failure instead of a stuck test.
  const std::string command = "timeout 120 " + binary.string() + " " + arguments + " 2>" + err_file.string();
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

// One line on stderr, exit 2, mentioning every expected fragment.
inline void expect_user_error(const std::string& arguments, std::initializer_list<const char*> fragments) {
  const Outcome outcome = run_profile(arguments);
  EXPECT_EQ(outcome.exit_code, 2) << arguments << "\n" << outcome.stderr_text;
  EXPECT_EQ(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n'), 1) << outcome.stderr_text;
  for (const char* fragment : fragments)
    EXPECT_NE(outcome.stderr_text.find(fragment), std::string::npos) << fragment << " not in: " << outcome.stderr_text;
}

}  // namespace shapescope::testing_support
