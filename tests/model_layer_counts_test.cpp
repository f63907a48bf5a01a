// Layer counts in the model catalog (num_hidden_layers, module_layers) and from
// Hugging Face configs: the two routes agree on the published configs, and malformed
// counts are rejected with the file and the fix.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "common/model_catalog.hpp"
#include "common/user_error.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope {
namespace {

const std::filesystem::path kCatalogDir = SHAPESCOPE_SOURCE_DIR "/models";
const std::filesystem::path kConfigs = SHAPESCOPE_SOURCE_DIR "/tests/data/hf_configs";

TEST(ModelLayerCounts, EveryCatalogModelStatesItsLayers) {
  const ModelCatalog catalog = ModelCatalog::load(kCatalogDir);
  const std::map<std::string, int64_t> expected = {
      {"llama3_8b", 32},         {"llama3_70b", 80},      {"llama3_405b", 126},
      {"qwen3_4b", 36},          {"qwen3_30b_a3b", 48},   {"qwen3_235b_a22b", 94},
      {"qwen3_coder_480b_a35b", 62}, {"qwen3_next_80b_a3b", 48}, {"deepseek_v3", 61},
      {"deepseek_r1", 61},       {"deepseek_r1_nvfp4", 61}, {"gpt_oss_20b", 24},
      {"gpt_oss_120b", 36},      {"llama3_3_70b_nvfp4", 80}};
  for (const ModelSpec& spec : catalog.models()) {
    ASSERT_TRUE(expected.contains(spec.name)) << spec.name << " has no expected layer count here";
    EXPECT_EQ(spec.num_hidden_layers, expected.at(spec.name)) << spec.name;
  }
}

TEST(ModelLayerCounts, ModulesThatSkipLayersSayInHowMany) {
  const ModelCatalog catalog = ModelCatalog::load(kCatalogDir);
  const ModelSpec& deepseek = catalog.model("deepseek_v3");
  EXPECT_EQ(layers_running(deepseek, "gate_up_proj"), 3);            // dense MLP: first_k_dense_replace
  EXPECT_EQ(layers_running(deepseek, "moe_down_proj"), 58);          // MoE in the rest
  EXPECT_EQ(layers_running(deepseek, "shared_expert_gate_up_proj"), 58);
  EXPECT_EQ(layers_running(deepseek, "q_b_proj"), 61);               // attention in every layer
  const ModelSpec& next = catalog.model("qwen3_next_80b_a3b");
  EXPECT_EQ(layers_running(next, "qkv_proj"), 12);                   // full attention: 1 in 4
  EXPECT_EQ(layers_running(next, "linear_in_proj_qkvz"), 36);        // Gated DeltaNet: 3 in 4
  EXPECT_EQ(layers_running(next, "moe_gate_up_proj"), 48);
  EXPECT_EQ(layers_running(catalog.model("llama3_405b"), "down_proj"), 126);
}

std::string parse_error(const std::string& top_level) {
  return testing_support::user_error_of([&] {
    parse_model_json(R"({"name": "t", "source": "s", )" + top_level +
                         R"(, "layers": [{"name": "a", "k": 1, "n": 1, "tp": "split_n"}]})",
                     "t.json");
  });
}

TEST(ModelLayerCounts, MalformedCountsNameTheFileAndTheFix) {
  EXPECT_NE(parse_error(R"("num_hidden_layers": 0)").find("'num_hidden_layers' is 0"), std::string::npos);
  EXPECT_NE(parse_error(R"("module_layers": {"a": 1})").find("needs 'num_hidden_layers'"), std::string::npos);
  EXPECT_NE(parse_error(R"("num_hidden_layers": 4, "module_layers": {"b": 1})").find("names 'b', which is not a layer"),
            std::string::npos);
  EXPECT_NE(parse_error(R"("num_hidden_layers": 4, "module_layers": {"a": 5})").find("more than num_hidden_layers 4"),
            std::string::npos);
  EXPECT_NE(parse_error(R"("num_hidden_layers": 4, "module_layers": [1])").find("must be an object"),
            std::string::npos);
  EXPECT_EQ(parse_error(R"("num_hidden_layers": 4, "module_layers": {"a": 2})"), "");
  const ModelSpec unknown = parse_model_json(
      R"({"name": "t", "source": "s", "layers": [{"name": "a", "k": 1, "n": 1, "tp": "split_n"}]})", "t.json");
  EXPECT_THROW(layers_running(unknown, "a"), UserError);
}

// The published config.json and the hand-written catalog are independent routes to the counts.
TEST(ModelLayerCounts, HfConfigsGiveTheCatalogsCounts) {
  const ModelCatalog catalog = ModelCatalog::load(kCatalogDir);
  for (const std::string model : {"llama3_8b", "deepseek_v3", "qwen3_30b_a3b", "qwen3_4b"}) {
    const ModelSpec derived = model_from_hf_config(kConfigs / (model + ".json"), model);
    const ModelSpec& catalogued = catalog.model(model);
    EXPECT_EQ(derived.num_hidden_layers, catalogued.num_hidden_layers) << model;
    for (const LinearLayer& layer : catalogued.layers) {
      EXPECT_EQ(layers_running(derived, layer.name), layers_running(catalogued, layer.name)) << model << " "
                                                                                             << layer.name;
    }
  }
}

ModelSpec from_config(const std::string& text) {
  const testing_support::ScratchDir scratch;
  return model_from_hf_config(scratch.write("config.json", text), "custom");
}

TEST(ModelLayerCounts, QwenMoeSparseStepAndMlpOnlyLayers) {
  // 8 layers, experts every 2nd (layers 1, 3, 5, 7), layer 3 forced dense: 3 MoE, 5 dense.
  const ModelSpec spec = from_config(R"({"model_type": "qwen3_moe", "hidden_size": 1024, "num_attention_heads": 8,
      "num_key_value_heads": 2, "head_dim": 128, "intermediate_size": 2048, "moe_intermediate_size": 256,
      "num_experts": 16, "num_experts_per_tok": 2, "num_hidden_layers": 8, "decoder_sparse_step": 2,
      "mlp_only_layers": [3]})");
  EXPECT_EQ(layers_running(spec, "moe_gate_up_proj"), 3);
  EXPECT_EQ(layers_running(spec, "gate_up_proj"), 5);
  EXPECT_EQ(layers_running(spec, "qkv_proj"), 8);
}

TEST(ModelLayerCounts, DeepseekMoeLayerFrequency) {
  // 10 layers, dense before 2, then MoE on even layers: 2, 4, 6, 8.
  const ModelSpec spec = from_config(R"({"model_type": "deepseek_v3", "hidden_size": 1024, "num_attention_heads": 8,
      "kv_lora_rank": 128, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64, "q_lora_rank": 256,
      "intermediate_size": 2048, "moe_intermediate_size": 256, "n_shared_experts": 1, "n_routed_experts": 16,
      "num_experts_per_tok": 2, "num_hidden_layers": 10, "first_k_dense_replace": 2, "moe_layer_freq": 2})");
  EXPECT_EQ(layers_running(spec, "moe_down_proj"), 4);
  EXPECT_EQ(layers_running(spec, "shared_expert_down_proj"), 4);
  EXPECT_EQ(layers_running(spec, "down_proj"), 6);
  EXPECT_EQ(layers_running(spec, "kv_b_proj"), 10);
}

}  // namespace
}  // namespace shapescope
