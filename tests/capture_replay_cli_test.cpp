// `profile --verify-capture-sizes` end to end on the CPU backend: a tiny Llama-style model
// profiled with two kernels, analyze --capture-sizes --json over those
// profiles, then the replay of that report through the built binaries; bad reports are
// one line and exit 2 before any work.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/analyze_cli_support.hpp"
#include "tests/profile_cli_support.hpp"
#include "tests/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using shapescope::testing_support::expect_user_error;
using shapescope::testing_support::Outcome;
using shapescope::testing_support::run_profile;
using shapescope::testing_support::ScratchDir;

constexpr int64_t kLayers = 3;
constexpr int64_t kModules = 4;  // Llama: qkv_proj, o_proj, gate_up_proj, down_proj
const std::string kQuick = " --threads 1 --min-samples 2 --max-samples 3 --warmup 0 --max-seconds-per-point 0 ";

json read_json(const fs::path& path) {
  std::ifstream file(path);
  return json::parse(file);
}

class CaptureReplayCli : public ::testing::Test {
 protected:
  // Profiles and the capture report are made once for every test of the suite.
  static void SetUpTestSuite() {
    if (!shapescope::testing_support::profile_binary_built() || !shapescope::testing_support::analyze_binary_built()) {
      return;
    }
    scratch_ = std::make_unique<ScratchDir>();
    dir_ = scratch_->path();
    fs::create_directories(dir_ / "profiles");
    const fs::path config = dir_ / "tiny_config.json";
    std::ofstream(config) << R"({"model_type": "llama", "hidden_size": 256, "num_attention_heads": 2,
                                  "num_key_value_heads": 1, "head_dim": 128, "intermediate_size": 384,
                                  "num_hidden_layers": 3})";
    const Outcome profiled = run_profile(
        "--hf-config " + config.string() + " --model tiny --module all --backend cpu --kernel cpu_fp8_blockscale "
        "--kernel cpu_bf16 --m-list 1,2,3,4,5,6 --peak-tflops 1 --no-warm-up" + kQuick + "--out " +
        (dir_ / "profiles").string());
    if (profiled.exit_code != 0) {
      setup_error_ = "profile: " + profiled.stderr_text;
      return;
    }
    config_ = config;
    const std::string log = run_analyze("--json " + report().string());
    if (!fs::exists(report())) setup_error_ = "analyze: " + log;
  }
  // analyze --capture-sizes over the profiles with `extra`; its stdout and stderr.
  static std::string run_analyze(const std::string& extra) {
    const shapescope::testing_support::CliResult run = shapescope::testing_support::run_analyze(
        *scratch_, (dir_ / "profiles").string() + "/*.csv --capture-sizes --m-weights uniform:6 --max-graphs 2 "
                   "--hf-config " + config_.string() + " " + extra);
    return run.output + "\nexit code " + std::to_string(run.exit_code);
  }
  static void TearDownTestSuite() { scratch_.reset(); }
  void SetUp() override {
    if (dir_.empty()) GTEST_SKIP() << "profile or analyze not built";
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
  }

  static fs::path report() { return dir_ / "capture.json"; }
  // The report with `edit` applied, written beside it.
  static fs::path edited_report(const std::string& name, const std::function<void(json&)>& edit) {
    json root = read_json(report());
    edit(root);
    const fs::path path = dir_ / name;
    std::ofstream(path) << root.dump(1);
    return path;
  }

  static inline std::unique_ptr<ScratchDir> scratch_;
  static inline fs::path dir_, config_;
  static inline std::string setup_error_;
};

// The sizes a list serves the report's weighted batches with.
std::set<int64_t> served_sizes(const json& report, const std::string& key) {
  std::set<int64_t> sizes;
  for (const json& batch : report["batches"]) {
    if (batch["weight"].get<double>() > 0) sizes.insert(batch.at("served").at(key).at("size").get<int64_t>());
  }
  return sizes;
}

TEST_F(CaptureReplayCli, ReplaysEveryServedSizeAndComparesBothLists) {
  const fs::path out = dir_ / "replay.json";
  const Outcome outcome = run_profile("--verify-capture-sizes " + report().string() + " --verify-out " +
                                      out.string() + kQuick);
  ASSERT_EQ(outcome.exit_code, 0) << outcome.stderr_text;
  EXPECT_NE(outcome.stdout_text.find("saving of"), std::string::npos) << outcome.stdout_text;

  const json capture = read_json(report());
  const json replay = read_json(out);
  const std::string candidate = capture["recommended"];
  std::set<int64_t> expected = served_sizes(capture, "vllm_default");
  for (const int64_t size : served_sizes(capture, candidate)) expected.insert(size);
  std::set<int64_t> replayed;
  std::map<int64_t, double> measured;
  for (const json& size : replay["sizes"]) {
    const int64_t m = size["size"];
    replayed.insert(m);
    measured[m] = size["measured_us"];
    EXPECT_GT(size["measured_us"].get<double>(), 0) << m;
    EXPECT_EQ(size["launches"], kModules * kLayers) << m;
    EXPECT_EQ(size["weight_copies"], kLayers) << m;  // a tiny model's layers all fit
    EXPECT_LT(size["max_rel_err"].get<double>(), 1e-2) << m;
    EXPECT_EQ(size["note"], "") << m;
    for (const json& grid : capture["grid"]) {
      if (grid["m"] == m) {
        EXPECT_DOUBLE_EQ(size["predicted_us"].get<double>(), grid["step_us"].get<double>()) << m;
      }
    }
    for (const json& module : capture["modules"]) {  // the kernel the report chose at M, module by module
      for (const json& point : module["points"]) {
        if (point["m"] == m) {
          EXPECT_EQ(size.at("kernels").at(module["module"].get<std::string>()), point["kernel"]) << m;
        }
      }
    }
  }
  EXPECT_EQ(replayed, expected);

  for (const auto& [side, key] : {std::pair<std::string, std::string>{"baseline", "vllm_default"},
                                  std::pair<std::string, std::string>{"candidate", candidate}}) {
    const json& list = replay[side];
    EXPECT_EQ(list["key"], key);
    double report_expected = 0;
    for (const json& l : capture["lists"]) {
      if (l["key"] == key) report_expected = l["expected_step_us"];
    }
    // The predicted expected step time, summed from the grid's T, is the one analyze reported.
    EXPECT_NEAR(list["predicted_us"].get<double>(), report_expected, 1e-9 * report_expected) << key;
    double weighted = 0, total = 0;
    for (const json& batch : capture["batches"]) {
      weighted += batch["weight"].get<double>() * measured.at(batch.at("served").at(key).at("size").get<int64_t>());
      total += batch["weight"].get<double>();
    }
    EXPECT_NEAR(list["measured_us"].get<double>(), weighted / total, 1e-9 * weighted) << key;
  }
  const double baseline = replay["baseline"]["measured_us"], chosen = replay["candidate"]["measured_us"];
  EXPECT_NEAR(replay["saving"]["measured_pct"].get<double>(), 100 * (baseline - chosen) / baseline, 1e-9);
  EXPECT_EQ(replay["timing"], "graph");

  // analyze shows the replay beside the recommendation it checked, and refuses another model's.
  const std::string shown = run_analyze("--capture-replay " + out.string());
  EXPECT_NE(shown.find("--capture-replay " + out.string()), std::string::npos) << shown;
  EXPECT_NE(shown.find("saving of " + candidate + " against vllm_default"), std::string::npos) << shown;
  const fs::path other = dir_ / "other_model.json";
  json edited = replay;
  edited["model"] = "other";
  std::ofstream(other) << edited.dump();
  const std::string refused = run_analyze("--capture-replay " + other.string());
  EXPECT_NE(refused.find("it replayed other at tp1"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("capture sizes for"), std::string::npos) << refused;  // refused before any output
}

TEST_F(CaptureReplayCli, TooFewFieldsKernelsOrDenseModulesAreOneLineBeforeAnyWork) {
  const fs::path out = dir_ / "refused.json";
  const std::string rest = " --verify-out " + out.string() + kQuick;
  expect_user_error("--verify-capture-sizes " +
                        edited_report("no_modules.json", [](json& root) { root.erase("modules"); }).string() + rest,
                    {"no_modules.json", "has no 'modules'", "analyze --capture-sizes --json"});
  expect_user_error("--verify-capture-sizes " +
                        edited_report("unknown_kernel.json",
                                      [](json& root) { root["modules"][1]["points"][0]["kernel"] = "no_such_kernel"; })
                            .string() +
                        rest,
                    {"'no_such_kernel'", "o_proj", "not in this binary"});
  expect_user_error("--verify-capture-sizes " +
                        edited_report("grouped.json", [](json& root) { root["modules"][2]["cost_model"] = "grouped"; })
                            .string() +
                        rest,
                    {"gate_up_proj", "grouped", "--exclude-module gate_up_proj"});
  expect_user_error("--verify-capture-sizes " +
                        edited_report("no_layers.json", [](json& root) { root["modules"][0].erase("layers"); }).string() +
                        rest,
                    {"modules[0] (qkv_proj) has no 'layers'"});
  // Sizes no model has once ended in std::bad_alloc (exit 1).
  expect_user_error("--verify-capture-sizes " +
                        edited_report("huge_n.json", [](json& root) { root["modules"][0]["n"] = int64_t(1) << 34; })
                            .string() +
                        rest,
                    {"huge_n.json", "'n' is 17179869184; expected 1 to"});
  expect_user_error("--verify-capture-sizes " +
                        edited_report("huge_layers.json",
                                      [](json& root) { root["modules"][0]["layers"] = int64_t(1000000000000); })
                            .string() +
                        rest,
                    {"huge_layers.json", "'layers' is 1000000000000; expected 1 to"});
  expect_user_error("--verify-capture-sizes " + report().string() + " --verify-candidate best" + rest,
                    {"no list 'best'", "vllm_default"});
  expect_user_error("--verify-capture-sizes " + report().string() + " --verify-plans " + report().string() + rest,
                    {"give one of them"});
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
