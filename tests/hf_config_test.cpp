#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/model_catalog.hpp"
#include "common/user_error.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope {
namespace {

const std::filesystem::path kConfigs = SHAPESCOPE_SOURCE_DIR "/tests/data/hf_configs";

// Layers compared on everything that shapes a GEMM (notes are prose and may differ).
void expect_same_layers(const ModelSpec& derived, const ModelSpec& catalogued) {
  ASSERT_EQ(derived.layers.size(), catalogued.layers.size()) << catalogued.name;
  for (const LinearLayer& expected : catalogued.layers) {
    const auto found = std::find_if(derived.layers.begin(), derived.layers.end(),
                                    [&](const LinearLayer& layer) { return layer.name == expected.name; });
    ASSERT_NE(found, derived.layers.end()) << catalogued.name << " " << expected.name << " not derived";
    EXPECT_EQ(found->k, expected.k) << expected.name;
    EXPECT_EQ(found->n, expected.n) << expected.name;
    EXPECT_EQ(found->tp_rule, expected.tp_rule) << expected.name;
    EXPECT_EQ(found->batch_count, expected.batch_count) << expected.name;
    EXPECT_EQ(found->batch_split_by_tp, expected.batch_split_by_tp) << expected.name;
    EXPECT_EQ(found->experts, expected.experts) << expected.name;
    EXPECT_EQ(found->top_k, expected.top_k) << expected.name;
    EXPECT_EQ(found->expert_width, expected.expert_width) << expected.name;
    EXPECT_EQ(found->shared_experts, expected.shared_experts) << expected.name;
  }
}

class HfConfigMatchesCatalog : public ::testing::TestWithParam<std::string> {};

// The published config.json and the hand-written catalog entry are independent
// routes to the same shapes.
TEST_P(HfConfigMatchesCatalog, SameLayers) {
  const std::string model = GetParam();
  const ModelCatalog catalog = ModelCatalog::load(SHAPESCOPE_SOURCE_DIR "/models");
  const ModelSpec derived = model_from_hf_config(kConfigs / (model + ".json"), model);
  EXPECT_EQ(derived.name, model);
  EXPECT_NE(derived.source.find(model + ".json"), std::string::npos) << derived.source;
  expect_same_layers(derived, catalog.model(model));
}

INSTANTIATE_TEST_SUITE_P(PublishedConfigs, HfConfigMatchesCatalog,
                         ::testing::Values("llama3_8b", "deepseek_v3", "qwen3_30b_a3b", "qwen3_4b"));

class HfConfigErrors : public ::testing::Test {
 protected:
  std::string error_for(const std::string& content) {
    const testing_support::ScratchDir scratch;
    const std::filesystem::path path = scratch.write("config.json", content);
    return testing_support::user_error_of([&] { model_from_hf_config(path, "custom"); });
  }
};

TEST_F(HfConfigErrors, NameTheFileAndTheProblem) {
  EXPECT_NE(error_for(R"({"model_type": "gpt2"})").find("model_type 'gpt2' is not supported"), std::string::npos);
  EXPECT_NE(error_for(R"({"model_type": "llama", "hidden_size": 4096})").find("missing 'num_attention_heads'"),
            std::string::npos);
  EXPECT_NE(error_for(R"({"hidden_size": 4096})").find("missing 'model_type'"), std::string::npos);
  EXPECT_NE(error_for("{not json").find("invalid JSON"), std::string::npos);
  EXPECT_THROW(model_from_hf_config("/nonexistent/config.json", "x"), UserError);
}

const LinearLayer& layer_named(const ModelSpec& spec, const std::string& name) {
  const auto found = std::find_if(spec.layers.begin(), spec.layers.end(),
                                  [&](const LinearLayer& layer) { return layer.name == name; });
  if (found == spec.layers.end()) throw std::runtime_error(spec.name + " has no layer " + name);
  return *found;
}

// Qwen1.5-MoE-A2.7B: 60 routed experts of 1408, top-4, one shared expert of 5632 (qwen2_moe was refused before).
TEST(HfConfigMoeFamilies, Qwen2MoeHasRoutedAndSharedExperts) {
  const ModelSpec spec = model_from_hf_config(kConfigs / "qwen1_5_moe_a2_7b.json", "qwen1_5_moe");
  const LinearLayer& gate_up = layer_named(spec, "moe_gate_up_proj");
  EXPECT_EQ(gate_up.k, 2048);
  EXPECT_EQ(gate_up.n, 2 * 1408);
  EXPECT_EQ(gate_up.experts, 60);
  EXPECT_EQ(gate_up.top_k, 4);
  EXPECT_EQ(gate_up.expert_width, 1408);
  EXPECT_EQ(gate_up.shared_experts, 1);
  EXPECT_EQ(layer_named(spec, "moe_down_proj").k, 1408);
  EXPECT_EQ(layer_named(spec, "shared_expert_gate_up_proj").n, 2 * 5632);
  EXPECT_EQ(layer_named(spec, "shared_expert_down_proj").k, 5632);
  EXPECT_EQ(layer_named(spec, "qkv_proj").n, 3 * 2048);  // 16 heads, 16 KV heads of 128
  // Every layer sparse: no dense MLP besides the shared expert.
  EXPECT_THROW(layer_named(spec, "gate_up_proj"), std::runtime_error);
}

// Mixtral-style num_local_experts: every MLP is 8 routed experts of intermediate_size, top-2.
TEST(HfConfigMoeFamilies, MixtralExpertsAreTheWholeMlp) {
  const ModelSpec spec = model_from_hf_config(kConfigs / "mixtral_8x7b.json", "mixtral");
  ASSERT_EQ(spec.layers.size(), 4u);
  const LinearLayer& down = layer_named(spec, "moe_down_proj");
  EXPECT_EQ(down.k, 14336);
  EXPECT_EQ(down.n, 4096);
  EXPECT_EQ(down.experts, 8);
  EXPECT_EQ(down.top_k, 2);
  EXPECT_EQ(down.expert_width, 14336);
  EXPECT_EQ(down.shared_experts, 0);
  EXPECT_EQ(layer_named(spec, "qkv_proj").n, (32 + 2 * 8) * 128);
}

// gpt-oss: 128 experts of 2880, top-4, 64-wide heads; the top-k also read from experts_per_token alone.
TEST(HfConfigMoeFamilies, GptOssReadsEitherTopKSpelling) {
  const ModelSpec spec = model_from_hf_config(kConfigs / "gpt_oss_120b.json", "gpt_oss");
  const LinearLayer& gate_up = layer_named(spec, "moe_gate_up_proj");
  EXPECT_EQ(gate_up.k, 2880);
  EXPECT_EQ(gate_up.n, 2 * 2880);
  EXPECT_EQ(gate_up.experts, 128);
  EXPECT_EQ(gate_up.top_k, 4);
  EXPECT_EQ(layer_named(spec, "qkv_proj").n, (64 + 2 * 8) * 64);
  EXPECT_EQ(layer_named(spec, "o_proj").k, 64 * 64);

  const testing_support::ScratchDir scratch;
  const std::filesystem::path path = scratch.write("config.json", R"({"model_type": "gpt_oss", "hidden_size": 512, "intermediate_size": 256, "head_dim": 64,
                             "num_attention_heads": 8, "num_key_value_heads": 2, "num_local_experts": 32,
                             "experts_per_token": 2})");
  const ModelSpec short_spec = model_from_hf_config(path, "gpt_oss_short");
  EXPECT_EQ(layer_named(short_spec, "moe_down_proj").top_k, 2);
  EXPECT_EQ(layer_named(short_spec, "moe_down_proj").experts, 32);
}

TEST(HfConfig, DefaultsHeadDimAndKvHeads) {
  const testing_support::ScratchDir scratch;
  const std::filesystem::path path = scratch.write("config.json", R"({"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 16,
                             "intermediate_size": 5632})");
  const ModelSpec spec = model_from_hf_config(path, "mha");
  ASSERT_EQ(spec.layers.size(), 4u);
  EXPECT_EQ(spec.layers[0].name, "qkv_proj");
  EXPECT_EQ(spec.layers[0].n, 3 * 2048);  // no num_key_value_heads: plain multi-head attention
  EXPECT_EQ(spec.layers[1].k, 2048);
}

}  // namespace
}  // namespace shapescope
