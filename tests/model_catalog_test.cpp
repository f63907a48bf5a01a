#include "common/model_catalog.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/csv.hpp"
#include "common/user_error.hpp"
#include "test_data.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope {
namespace {

const std::filesystem::path kCatalogDir = SHAPESCOPE_SOURCE_DIR "/models";

const ModelCatalog& catalog() {
  static const ModelCatalog loaded = ModelCatalog::load(kCatalogDir);
  return loaded;
}

const GemmProblem& find_problem(const std::vector<GemmProblem>& problems, const std::string& module) {
  for (const GemmProblem& problem : problems) {
    if (problem.module == module) return problem;
  }
  throw std::runtime_error("no module " + module);
}

using testing_support::user_error_of;

TEST(ModelCatalog, ShipsTheModelsTheIssueNames) {
  std::set<std::string> names;
  for (const ModelSpec& spec : catalog().models()) {
    names.insert(spec.name);
    EXPECT_FALSE(spec.source.empty()) << spec.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"llama3_8b", "llama3_70b", "llama3_405b", "deepseek_v3", "deepseek_r1",
                                          "gpt_oss_20b", "gpt_oss_120b", "deepseek_r1_nvfp4", "llama3_3_70b_nvfp4",
                                          "qwen3_235b_a22b", "qwen3_coder_480b_a35b", "qwen3_30b_a3b",
                                          "qwen3_next_80b_a3b", "qwen3_4b"}));
}

TEST(ModelCatalog, LlamaTpSplitsTheRightDimension) {
  const std::vector<GemmProblem> tp1 = catalog().problems("llama3_8b", "all", 1);
  const std::vector<GemmProblem> tp2 = catalog().problems("llama3_8b", "all", 2);
  ASSERT_EQ(tp1.size(), 4u);
  ASSERT_EQ(tp2.size(), 4u);
  // The study's shape: gate_up_proj at TP2 is K=4096, N=14336.
  const GemmProblem& gate_up = find_problem(tp2, "gate_up_proj");
  EXPECT_EQ(gate_up.n, 14336);
  EXPECT_EQ(gate_up.k, 4096);
  EXPECT_EQ(gate_up.tp, 2);
  EXPECT_EQ(gate_up.model, "llama3_8b");
  for (const char* split_n : {"qkv_proj", "gate_up_proj"}) {
    EXPECT_EQ(find_problem(tp2, split_n).n * 2, find_problem(tp1, split_n).n) << split_n;
    EXPECT_EQ(find_problem(tp2, split_n).k, find_problem(tp1, split_n).k) << split_n;
  }
  for (const char* split_k : {"o_proj", "down_proj"}) {
    EXPECT_EQ(find_problem(tp2, split_k).k * 2, find_problem(tp1, split_k).k) << split_k;
    EXPECT_EQ(find_problem(tp2, split_k).n, find_problem(tp1, split_k).n) << split_k;
  }
  const GemmProblem& down = find_problem(tp1, "down_proj");
  EXPECT_EQ(down.k, 14336);
  EXPECT_EQ(down.n, 4096);
}

TEST(ModelCatalog, AbsorbedMlaSplitsHeadsNotShapes) {
  const std::vector<GemmProblem> tp8 = catalog().problems("deepseek_v3", "mla_absorb_q", 8);
  ASSERT_EQ(tp8.size(), 1u);
  EXPECT_EQ(tp8[0].n, 512);
  EXPECT_EQ(tp8[0].k, 128);
  EXPECT_EQ(tp8[0].batch_count, 128 / 8);
  const GemmProblem out = catalog().problems("deepseek_v3", "mla_absorb_out", 4).at(0);
  EXPECT_EQ(out.n, 128);
  EXPECT_EQ(out.k, 512);
  EXPECT_EQ(out.batch_count, 128 / 4);
  const GemmProblem replicated = catalog().problems("deepseek_v3", "fused_qkv_a_proj", 8).at(0);
  EXPECT_EQ(replicated.n, 2112);
  EXPECT_EQ(replicated.k, 7168);
}

// The (N, K) pairs of AITER's tuned DeepSeek-V3 tables (one file may hold several).
std::set<std::pair<int64_t, int64_t>> aiter_deepseek_pairs(const std::filesystem::path& directory) {
  std::set<std::pair<int64_t, int64_t>> pairs;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    const std::string file = entry.path().filename().string();
    if (file.find("ds") == std::string::npos || file.find("v3") == std::string::npos) continue;
    const csv::Table table = csv::read_file(entry.path());
    const int n = table.column("N");
    const int k = table.column("K");
    for (const auto& row : table.rows) pairs.emplace(std::stoll(row.at(n)), std::stoll(row.at(k)));
  }
  return pairs;
}

TEST(ModelCatalog, DeepseekV3AtTp8MatchesAitersTunedShapes) {
  const std::filesystem::path aiter = testing_data::data_dir() / "aiter";
  const std::set<std::pair<int64_t, int64_t>> tuned = aiter_deepseek_pairs(aiter);
  ASSERT_FALSE(tuned.empty());

  std::set<std::pair<int64_t, int64_t>> derived;
  for (const GemmProblem& problem : catalog().problems("deepseek_v3", "all", 8)) {
    if (problem.batch_count > 1) continue;  // absorbed MLA runs as a bf16 batched GEMM, not in AITER's FP8 tables
    derived.emplace(problem.n, problem.k);
    EXPECT_TRUE(tuned.contains({problem.n, problem.k}))
        << problem.module << " N=" << problem.n << " K=" << problem.k << " is not in AITER's DeepSeek-V3 tables";
  }
  // DeepSeek-V3's dense (N, K) pairs, read off AITER's files.
  const std::set<std::pair<int64_t, int64_t>> expected = {{3072, 1536}, {4096, 512}, {7168, 2048}, {2112, 7168},
                                                          {4608, 7168}, {7168, 2304}, {512, 7168},  {7168, 256}};
  EXPECT_EQ(derived, expected);
}

TEST(ModelCatalog, FlagsSplitsThatCutAScaleBlock) {
  const std::vector<GemmProblem> tp8 = catalog().problems("qwen3_235b_a22b", "all", 8);
  const GemmProblem& down = find_problem(tp8, "moe_down_proj");
  EXPECT_EQ(down.k, 1536 / 8);
  EXPECT_EQ(down.experts, 128);
  EXPECT_EQ(down.top_k, 8);
  EXPECT_TRUE(down.cuts_scale_block);
  // N = 3072/8 = 384 is three blocks, but gate and up are each 1536/8 = 192 wide: a scale block straddles them.
  EXPECT_EQ(find_problem(tp8, "moe_gate_up_proj").n, 384);
  EXPECT_TRUE(find_problem(tp8, "moe_gate_up_proj").cuts_scale_block);
  EXPECT_FALSE(find_problem(catalog().problems("deepseek_v3", "all", 8), "moe_gate_up_proj").cuts_scale_block);
  EXPECT_FALSE(find_problem(catalog().problems("qwen3_235b_a22b", "all", 4), "moe_down_proj").cuts_scale_block);
  // A dimension that was never a multiple of 128 is not "cut" by the split.
  EXPECT_FALSE(find_problem(catalog().problems("qwen3_next_80b_a3b", "all", 8), "linear_in_proj_ba").cuts_scale_block);
}

TEST(ModelCatalog, ExpertLayersKnowWidthAndSharedExperts) {
  for (const ModelSpec& spec : catalog().models()) {
    for (const LinearLayer& layer : spec.layers) {
      if (layer.experts == 0) continue;
      SCOPED_TRACE(spec.name + " " + layer.name);
      EXPECT_GT(layer.expert_width, 0);
      EXPECT_TRUE(layer.k == layer.expert_width || layer.n == 2 * layer.expert_width);
    }
  }
  const GemmProblem gate_up = find_problem(catalog().problems("deepseek_v3", "all", 8), "moe_gate_up_proj");
  EXPECT_EQ(gate_up.expert_width, 2048);
  EXPECT_EQ(gate_up.shared_experts, 1);
  EXPECT_EQ(gate_up.local_experts, 256);  // TP: every rank holds every expert, 1/8 of its width
  EXPECT_EQ(gate_up.ep, 1);
  EXPECT_EQ(find_problem(catalog().problems("qwen3_235b_a22b", "all", 1), "moe_down_proj").shared_experts, 0);
}

TEST(ModelCatalog, ExpertsModuleAndExpertParallelism) {
  const std::vector<GemmProblem> ep8 = catalog().problems("deepseek_v3", kExpertsModule, 8, 8);
  ASSERT_EQ(ep8.size(), 2u);
  const GemmProblem& gate_up = find_problem(ep8, "moe_gate_up_proj");
  const GemmProblem& down = find_problem(ep8, "moe_down_proj");
  // Whole experts per rank: the checkpoint's N and K, 256/8 experts on each GPU.
  EXPECT_EQ(gate_up.n, 4096);
  EXPECT_EQ(gate_up.k, 7168);
  EXPECT_EQ(down.n, 7168);
  EXPECT_EQ(down.k, 2048);
  EXPECT_EQ(gate_up.ep, 8);
  EXPECT_EQ(gate_up.local_experts, 32);
  EXPECT_EQ(down.top_k, 8);
  EXPECT_FALSE(gate_up.cuts_scale_block);
  // Under TP the same module splits each expert's width instead.
  const std::vector<GemmProblem> tp8 = catalog().problems("deepseek_v3", kExpertsModule, 8);
  EXPECT_EQ(find_problem(tp8, "moe_gate_up_proj").n, 4096 / 8);
  EXPECT_EQ(find_problem(tp8, "moe_down_proj").k, 2048 / 8);
  // EP leaves the dense layers to TP.
  const std::vector<GemmProblem> all = catalog().problems("deepseek_v3", "all", 8, 8);
  EXPECT_EQ(find_problem(all, "o_proj").k, 16384 / 8);
  EXPECT_EQ(find_problem(all, "moe_down_proj").k, 2048);
  // Qwen3-235B at EP8: whole 1536-wide experts, no cut scale block.
  EXPECT_FALSE(find_problem(catalog().problems("qwen3_235b_a22b", kExpertsModule, 8, 8), "moe_down_proj").cuts_scale_block);
}

TEST(ModelCatalog, ExpertParallelismErrorsNameTheFix) {
  const std::string not_dividing = user_error_of([] { catalog().problems("qwen3_coder_480b_a35b", kExpertsModule, 1, 3); });
  EXPECT_NE(not_dividing.find("160 experts do not split over ep=3"), std::string::npos) << not_dividing;
  EXPECT_NE(not_dividing.find("--ep 1, 2, 4, 5, 8"), std::string::npos) << not_dividing;
  const std::string dense_model = user_error_of([] { catalog().problems("llama3_8b", kExpertsModule, 1); });
  EXPECT_NE(dense_model.find("no routed expert layers"), std::string::npos) << dense_model;
  const std::string dense_module = user_error_of([] { catalog().problems("deepseek_v3", "o_proj", 8, 8); });
  EXPECT_NE(dense_module.find("--ep 8 applies to routed experts"), std::string::npos) << dense_module;
  EXPECT_NE(dense_module.find("--module experts"), std::string::npos) << dense_module;
  EXPECT_NE(user_error_of([] { catalog().problems("llama3_8b", "all", 1, 2); }).find("an MoE model"), std::string::npos);
  EXPECT_NE(user_error_of([] { catalog().problems("deepseek_v3", kExpertsModule, 8, 0); }), "");
}

TEST(ModelCatalog, RejectsTpThatDoesNotDivideALayer) {
  const std::string message = user_error_of([] { catalog().problems("llama3_8b", "qkv_proj", 5); });
  EXPECT_EQ(message, "llama3_8b qkv_proj: N=6144 is not divisible by tp=5; use --tp 1, 2, 4 or 8");
  EXPECT_NE(user_error_of([] { catalog().problems("llama3_8b", "all", 3); }).find("o_proj: K=4096"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { catalog().problems("llama3_8b", "all", 16); }).find("tp=16 is not supported"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { catalog().problems("llama3_8b", "all", 0); }), "");
}

TEST(ModelCatalog, UnknownNamesListTheValidOnes) {
  const std::string model = user_error_of([] { catalog().problems("llama4", "all", 1); });
  EXPECT_NE(model.find("unknown model 'llama4'"), std::string::npos) << model;
  EXPECT_NE(model.find("llama3_8b"), std::string::npos) << model;
  EXPECT_NE(model.find("qwen3_4b"), std::string::npos) << model;
  const std::string module = user_error_of([] { catalog().problems("llama3_8b", "gate_proj", 1); });
  EXPECT_NE(module.find("unknown module 'gate_proj'"), std::string::npos) << module;
  EXPECT_NE(module.find("qkv_proj, o_proj, gate_up_proj, down_proj, all"), std::string::npos) << module;
}

TEST(ModelCatalog, ParsesOptionalFieldsAndRejectsTypos) {
  const ModelSpec spec = parse_model_json(
      R"({"name": "toy", "source": "test", "layers": [
            {"name": "a", "k": 256, "n": 512, "tp": "split_k", "batch_count": 4, "batch_split_by_tp": true,
             "experts": 16, "top_k": 2, "expert_width": 256, "shared_experts": 2, "note": "n"}]})",
      "toy.json");
  ASSERT_EQ(spec.layers.size(), 1u);
  EXPECT_EQ(spec.layers[0].tp_rule, TpRule::split_k);
  EXPECT_EQ(spec.layers[0].batch_count, 4);
  EXPECT_TRUE(spec.layers[0].batch_split_by_tp);
  EXPECT_EQ(spec.layers[0].experts, 16);
  EXPECT_EQ(spec.layers[0].top_k, 2);
  EXPECT_EQ(spec.layers[0].expert_width, 256);
  EXPECT_EQ(spec.layers[0].shared_experts, 2);
  EXPECT_EQ(to_string(spec.layers[0].tp_rule), "split_k");

  const auto error_for = [](const std::string& layer) {
    return user_error_of([&] { parse_model_json(R"({"name":"t","source":"s","layers":[)" + layer + "]}", "t.json"); });
  };
  EXPECT_NE(error_for(R"({"name":"a","k":1,"n":1,"tp":"split_n","batch_cont":2})").find("unknown key 'batch_cont'"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"name":"a","k":1,"n":1,"tp":"column"})").find("tp is 'column'"), std::string::npos);
  EXPECT_NE(error_for(R"({"name":"a","k":-4,"n":1,"tp":"split_n"})").find("'k' is -4"), std::string::npos);
  EXPECT_NE(error_for(R"({"name":"a","n":1,"tp":"split_n"})").find("missing 'k'"), std::string::npos);
  EXPECT_NE(error_for(R"({"name":"a","k":1,"n":1,"tp":"split_n","experts":8})").find("top_k"), std::string::npos);
  EXPECT_NE(error_for(R"({"name":"a","k":1,"n":2,"tp":"split_n","experts":8,"top_k":2})").find("expert_width"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"name":"a","k":64,"n":256,"tp":"split_n","experts":8,"top_k":2,"expert_width":100})")
                .find("matches neither"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"name":"a","k":1,"n":1,"tp":"split_n","shared_experts":1})").find("give experts"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"name":"a","k":1,"n":1,"tp":"split_n"},{"name":"a","k":1,"n":1,"tp":"split_n"})")
                .find("appears twice"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { parse_model_json("{", "broken.json"); }).find("broken.json: invalid JSON"),
            std::string::npos);
}

TEST(ModelCatalog, LoadDefaultHonoursTheEnvironmentOverride) {
  const testing_support::ScratchDir scratch;
  const std::filesystem::path empty = scratch.path();
  const char* previous = std::getenv("SHAPESCOPE_MODELS_DIR");
  const std::optional<std::string> saved = previous ? std::optional<std::string>(previous) : std::nullopt;
  ::setenv("SHAPESCOPE_MODELS_DIR", empty.c_str(), 1);
  const ModelCatalog overridden = ModelCatalog::load_default();
  ::unsetenv("SHAPESCOPE_MODELS_DIR");
  const ModelCatalog found = ModelCatalog::load_default();  // beside the test binary or in the source tree
  if (saved) ::setenv("SHAPESCOPE_MODELS_DIR", saved->c_str(), 1);
  EXPECT_TRUE(overridden.models().empty());
  EXPECT_EQ(found.models().size(), catalog().models().size());
}

}  // namespace
}  // namespace shapescope
