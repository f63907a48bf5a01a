// The inputs beyond profile CSVs, fuzzed: Hugging Face configs, --routing specs and histogram files, capture
// reports, m-weights (files and named shapes), folders of shards for --merge, and plugin libraries that are
// not plugins. Mutated text and extreme values; any outcome but a crash, a hang or an exception other than
// UserError is acceptable. A fixed seed and a fixed number of rounds, so every machine covers the same inputs.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analyze/batch_distribution.hpp"
#include "analyze/m_weights.hpp"
#include "common/capture_report_file.hpp"
#include "common/model_catalog.hpp"
#include "common/profile_schema.hpp"
#include "common/shard_manifest.hpp"
#include "common/user_error.hpp"
#include "kernels/plugin_kernels.hpp"
#include "profiler/moe_routing.hpp"
#include "profiler/profile_csv.hpp"
#include "profiler/sharded_sweep.hpp"
#include "profiler/sidecar.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;
using testing_support::ScratchDir;

const std::vector<std::string> kTokens = {"9223372036854775807", "-9223372036854775808", "18446744073709551615",
                                          "1e308", "-1", "0", "nan", "inf", "null", "[]", "{}", "\"\"", ",", "\n",
                                          "4294967296", "1e-320", "17179869184", "true"};

// `text` with 1 to 8 random edits: a byte changed, bytes cut, an extreme token put in, a number replaced.
std::string mutated(std::string text, std::mt19937& random) {
  const int edits = 1 + int(random() % 8);
  for (int edit = 0; edit < edits && !text.empty(); ++edit) {
    const std::size_t at = random() % text.size();
    switch (random() % 4) {
      case 0: text[at] = static_cast<char>(random() % 256); break;
      case 1: text.erase(at, 1 + random() % 6); break;
      case 2: text.insert(at, kTokens[random() % kTokens.size()]); break;
      default: {  // the number at `at`, if any, replaced whole: extreme values in well-formed input
        const std::size_t begin = text.find_first_of("0123456789", at);
        if (begin == std::string::npos) break;
        const std::size_t end = text.find_first_not_of("0123456789.e", begin);
        text.replace(begin, (end == std::string::npos ? text.size() : end) - begin, kTokens[random() % 6]);
      }
    }
  }
  return text;
}

// Runs `read`; true when it succeeded. Any exception but UserError fails the test, naming the input.
bool survives(const std::string& what, const std::string& input, const std::function<void()>& read) {
  try {
    read();
    return true;
  } catch (const UserError&) {
  } catch (const std::exception& error) {
    ADD_FAILURE() << what << ": " << typeid(error).name() << ": " << error.what() << " on input:\n"
                  << input.substr(0, 600);
  }
  return false;
}

std::string file_text(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path, std::ios::binary).rdbuf();
  return text.str();
}

TEST(InputFuzz, HfConfigs) {
  const ScratchDir dir;
  std::mt19937 random(11);
  std::vector<std::string> seeds;
  for (const auto& entry : fs::directory_iterator(fs::path(SHAPESCOPE_SOURCE_DIR) / "tests/data/hf_configs"))
    seeds.push_back(file_text(entry.path()));
  std::sort(seeds.begin(), seeds.end());
  int accepted = 0;
  for (int round = 0; round < 600; ++round) {
    const std::string text = mutated(seeds[std::size_t(round) % seeds.size()], random);
    const fs::path path = dir.write("config.json", text);
    accepted += survives("hf config", text, [&] {
      // Sizes never wrap around: 2^63-1 once came out as N=-4611686018427387952.
      for (const LinearLayer& layer : model_from_hf_config(path, "fuzzed").layers)
        EXPECT_TRUE(layer.n >= 0 && layer.k >= 0 && layer.batch_count >= 0) << layer.name << " of:\n" << text;
    });
  }
  RecordProperty("accepted", accepted);
  EXPECT_GT(accepted, 10) << "hardly any mutation was read: the layers were not exercised";
}

TEST(InputFuzz, RoutingSpecsAndHistograms) {
  const ScratchDir dir;
  std::mt19937 random(12);
  const std::vector<std::string> kinds = {"uniform", "balanced", "lognormal:", "zipf:", "file:", "zipf", "", ":"};
  const std::vector<std::string> numbers = {"1", "0.5", "300", "1000", "1e308", "-1", "0", "nan", "inf", "1e-320",
                                            "5e-324", "1.2x", ""};
  const std::string histogram = "expert,tokens\n0,10\n1,3\n2,0\n5,7\n7,1\n12,4\n";
  int routed = 0;
  for (int round = 0; round < 1500; ++round) {
    std::string spec = kinds[random() % kinds.size()];
    if (spec == "file:") {
      spec += dir.write("histogram.csv", random() % 4 ? mutated(histogram, random) : histogram).string();
    } else if (spec.back() == ':') {
      spec += numbers[random() % numbers.size()];
    }
    const int64_t experts = 1 + int64_t(random() % 300), top_k = 1 + int64_t(random() % 10);
    const int64_t tokens = int64_t(random() % 3000);
    const int64_t ep = std::vector<int64_t>{1, 2, 8}[random() % 3];
    routed += survives("routing", spec + " experts " + std::to_string(experts) + " top_k " + std::to_string(top_k), [&] {
      const profiler::Router router(profiler::parse_routing(spec), experts, top_k, uint64_t(round));
      const std::vector<int64_t> rows = router.expert_rows(tokens, uint64_t(round) * 7);
      ASSERT_EQ(int64_t(rows.size()), experts);
      EXPECT_EQ(std::accumulate(rows.begin(), rows.end(), int64_t(0)), tokens * top_k) << spec;
      for (const int64_t count : rows) EXPECT_TRUE(count >= 0 && count <= tokens) << spec << ": " << count;
      if (experts % ep == 0) (void)profiler::local_rows(rows, ep);
    });
  }
  RecordProperty("routed", routed);
  EXPECT_GT(routed, 300);
}

nlohmann::json capture_report_seed() {
  return {{"model", "m"},
          {"tp", 1},
          {"device", "cpu"},
          {"recommended", "best"},
          {"grid", {{{"m", 1}, {"step_us", 10.0}}, {{"m", 4}, {"step_us", 12.0}}}},
          {"modules",
           {{{"module", "o_proj"},
             {"n", 128},
             {"k", 256},
             {"batch_count", 1},
             {"layers", 2},
             {"cost_model", "dense"},
             {"points", {{{"m", 1}, {"kernel", "cpu_bf16"}}, {{"m", 4}, {"kernel", "cpu_bf16"}}}}}}},
          {"lists",
           {{{"key", "best"}, {"sizes", {1, 4}}, {"expected_step_us", 11.0}},
            {{"key", "vllm_default"}, {"sizes", {4}}, {"expected_step_us", 12.0}}}},
          {"batches",
           {{{"batch", 1}, {"weight", 0.5}, {"served", {{"best", {{"size", 1}}}, {"vllm_default", {{"size", 4}}}}}},
            {{"batch", 3}, {"weight", 0.5}, {"served", {{"best", {{"size", 4}}}, {"vllm_default", {{"size", 4}}}}}}}}};
}

TEST(InputFuzz, CaptureReports) {
  const ScratchDir dir;
  std::mt19937 random(13);
  const std::string seed = capture_report_seed().dump(1);
  ASSERT_TRUE(survives("capture report seed", seed, [&] { read_capture_report(dir.write("r.json", seed).string()); }));
  int accepted = 0;
  for (int round = 0; round < 800; ++round) {
    const std::string text = mutated(seed, random);
    accepted += survives("capture report", text, [&] { read_capture_report(dir.write("r.json", text).string()); });
  }
  RecordProperty("accepted", accepted);
  EXPECT_GT(accepted, 5);  // most edits break the JSON; those that do not reach every field's check
}

TEST(InputFuzz, MWeightsFilesAndNamedShapes) {
  const ScratchDir dir;
  std::mt19937 random(14);
  const std::string seed = "m,weight\n1,0.5\n2,1\n4,2\n8,0\n16,1e3\n";
  int accepted = 0;
  for (int round = 0; round < 800; ++round) {
    const std::string text = mutated(seed, random);
    const fs::path path = dir.write("weights.csv", text);
    accepted += survives("m-weights", text, [&] {
      const analyze::MWeights weights = analyze::MWeights::read(path.string());
      (void)weights.weight(1);
    });
  }
  const std::vector<std::string> shapes = {"uniform:", "geometric:", "zipf:", "poisson:", "uniform"};
  const std::vector<std::string> parameters = {"1", "16", "1e18", "0.5", "1e308", "-1", "0", "nan", "2.5", "1e-320"};
  for (int round = 0; round < 300; ++round) {
    const std::string spec = shapes[random() % shapes.size()] + parameters[random() % parameters.size()];
    const std::optional<int64_t> max_batch =
        random() % 3 == 0 ? std::nullopt : std::optional<int64_t>(std::vector<int64_t>{-5, 0, 1, 64, 1000000000000}[random() % 5]);
    survives("m-weights " + spec, spec, [&] { (void)analyze::batch_distribution(spec, max_batch); });
  }
  RecordProperty("accepted", accepted);
  EXPECT_GT(accepted, 20);
}

// Two shards of a plan of two files x M {1, 2, 4}, then one of their files (CSV, sidecar or manifest) mutated.
TEST(InputFuzz, ShardFoldersForMerge) {
  std::mt19937 random(15);
  const std::vector<std::string> files = {"a.csv", "b.csv"};
  int merged = 0;
  for (int round = 0; round < 200; ++round) {
    const ScratchDir dir;
    std::vector<fs::path> written;
    for (int index = 0; index < 2; ++index) {
      const fs::path folder = dir.path() / shard_folder_name(index, 2);
      fs::create_directories(folder);
      ShardManifest manifest;
      manifest.index = index;
      manifest.count = 2;
      manifest.plan_files = files;
      manifest.plan_m_values = {1, 2, 4};
      manifest.complete = true;
      for (const std::string& file : files) {
        manifest.points[file] = index == 0 ? std::vector<int64_t>{1, 4} : std::vector<int64_t>{2};
        std::vector<ProfileRow> rows;
        for (const int64_t m : manifest.points[file]) {
          ProfileRow row;
          row.batch = row.m = m;
          row.kernel_time_us = 10.0 * double(m);
          row.tflops = row.utils = row.peak_tflops = 1;
          rows.push_back(row);
        }
        profiler::write_profile_csv(folder / file, rows);
        std::ofstream(sidecar_path(folder / file)) << R"({"measurement_fingerprint": {"cache": "cold"}})";
        written.push_back(folder / file);
        written.push_back(sidecar_path(folder / file));
      }
      write_manifest(folder, manifest);
      written.push_back(manifest_path(folder));
    }
    const fs::path victim = written[random() % written.size()];
    const std::string text = mutated(file_text(victim), random);
    std::ofstream(victim, std::ios::binary | std::ios::trunc) << text;
    merged += survives("merge, " + victim.filename().string() + " mutated", text, [&] {
      const profiler::MergeResult result = profiler::merge_shards(dir.path());
      (void)result.shards.missing_summary();
    });
  }
  RecordProperty("merged", merged);
  EXPECT_GT(merged, 5);
}

TEST(InputFuzz, PluginLibrariesThatAreNotPlugins) {
  const ScratchDir dir;
  std::mt19937 random(16);
  std::string garbage(4096, '\0');
  for (char& c : garbage) c = static_cast<char>(random() % 256);
  const std::vector<std::string> paths = {
      (dir.path() / "absent.so").string(),
      dir.path().string(),  // a folder
      dir.write("empty.so", "").string(),
      dir.write("text.so", "not a library\n").string(),
      dir.write("garbage.so", garbage).string(),
      dir.write("elf_header_only.so", std::string("\x7f" "ELF\x02\x01\x01", 7) + garbage.substr(0, 57)).string(),
      "",
      "libm.so.6",  // a real library without the plugin entry
      (fs::path(SHAPESCOPE_BIN_DIR).parent_path() / "lib" / "libwrong_abi_plugin.so").string(),
  };
  for (const std::string& path : paths) {
    EXPECT_FALSE(survives("plugin " + path, path, [&] { kernels::load_plugin(path); })) << path << " was loaded";
  }
}

}  // namespace
}  // namespace shapescope
