// Every option of `profile` and `analyze`, read from the CLI itself (its hidden --list-options, CLI11's own
// option table), given values outside any documented domain — wrong type, negative, NaN and infinities, an
// overflowing integer, empty — on top of a command that succeeds: each must end in one line and exit 2. An
// option added later is walked too, with no list here to update.
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/cli_errors.hpp"
#include "common/user_error.hpp"
#include "tests/analyze_cli_support.hpp"
#include "tests/profile_cli_support.hpp"

namespace shapescope::testing_support {
namespace {

struct Option {
  std::string name, type;
};

std::vector<Option> listed_options(const std::string& binary) {
  const ScratchDir dir;
  const CliResult run = run_command(dir, binary + " --list-options");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  std::vector<Option> options;
  std::istringstream lines(run.output);
  for (Option option; lines >> option.name >> option.type;) options.push_back(option);
  return options;
}

// Values no option of that type documents as valid (every count is positive or >= 0, every number finite).
std::vector<std::string> bad_values(const std::string& type) {
  if (type == "INT" || type == "UINT")
    return {"abc", "1.5", "-1", "99999999999999999999", "''"};
  if (type == "FLOAT") return {"abc", "nan", "inf", "-inf", "-1", "1e999", "''"};
  return {"''"};
}

// `baseline` with `name value` set (replacing the baseline's own value of that option).
std::string with_option(const std::vector<std::pair<std::string, std::string>>& baseline, const std::string& name,
                        const std::string& value) {
  std::string command;
  for (const auto& [option, setting] : baseline)
    if (option != name) command += " " + option + (setting.empty() ? "" : " " + setting);
  return command + " " + name + (value.empty() ? "" : " " + value);
}

void walk(const std::string& binary, const std::vector<std::pair<std::string, std::string>>& baseline,
          const ScratchDir& dir) {
  const CliResult sound = run_command(dir, binary + with_option(baseline, "", ""));
  ASSERT_EQ(sound.exit_code, 0) << "the baseline command must succeed: " << sound.output;
  const std::vector<Option> options = listed_options(binary);
  ASSERT_GT(options.size(), 10u);
  int runs = 0;
  for (const Option& option : options) {
    const bool flag = option.type == "FLAG";
    for (const std::string& value : flag ? std::vector<std::string>{"=maybe"} : bad_values(option.type)) {
      const std::string arguments = flag ? with_option(baseline, option.name + value, "")
                                         : with_option(baseline, option.name, value);
      const CliResult run = run_command(dir, binary + arguments);
      ++runs;
      EXPECT_EQ(run.exit_code, 2) << option.name << " " << value << " (" << option.type << "):\n" << run.output;
      EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1)
          << option.name << " " << value << ":\n" << run.output;
    }
  }
  ::testing::Test::RecordProperty("runs", runs);
}

TEST(CliOptionDomains, EveryProfileOptionOutsideItsDomainExits2WithOneLine) {
  if (!profile_binary_built()) GTEST_SKIP() << "profile binary not built";
  const ScratchDir dir;
  walk(profile_binary(),
       {{"--backend", "cpu"}, {"--shape", "64,64"}, {"--m-list", "1"}, {"--kernel", "cpu_bf16"},
        {"--peak-tflops", "1"}, {"--min-samples", "1"}, {"--max-samples", "1"}, {"--warmup", "0"},
        {"--threads", "1"}, {"--out", (dir.path() / "out").string()}},
       dir);
}

TEST(CliOptionDomains, EveryAnalyzeOptionOutsideItsDomainExits2WithOneLine) {
  if (!analyze_binary_built()) GTEST_SKIP() << "analyze binary not built";
  const ScratchDir dir;
  const auto profile = dir.write("p.csv", "batch,kernel_time,flops,utils\n4,10,4,0.4\n8,12,6.6,0.66\n12,40,3,0.3\n");
  walk(analyze_binary().string(), {{profile.string(), ""}, {"--out-dir", (dir.path() / "out").string()}}, dir);
}

TEST(CliErrors, AnInternalErrorNamesItselfABugAndExits70) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(report_failure("profile", std::logic_error("a size that is not a candidate")), 70);
  const std::string line = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(line.find("a bug in shapescope"), std::string::npos) << line;
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(report_failure("profile", UserError("--tp 0: give 1 or more")), 2);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "profile: --tp 0: give 1 or more\n");
}

}  // namespace
}  // namespace shapescope::testing_support
