#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/model_catalog.hpp"
#include "common/user_error.hpp"

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
  }
}

class HfConfigMatchesCatalog : public ::testing::TestWithParam<std::string> {};

// The published config.json and the hand-written catalog entry are independent
// routes to the same shapes.
TEST_P(HfConfigMatchesCatalog, SameLayers) {
  const std::string model = GetParam();
  const ModelCatalog catalog = ModelCatalog::load(SHAPESCOPE_SOURCE_DIR "/profiles/models");
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
    const std::filesystem::path path = std::filesystem::temp_directory_path() / "shapescope_hf_config_test.json";
    std::ofstream(path) << content;
    std::string message;
    try {
      model_from_hf_config(path, "custom");
    } catch (const UserError& error) {
      message = error.what();
    }
    std::filesystem::remove(path);
    return message;
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

TEST(HfConfig, DefaultsHeadDimAndKvHeads) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "shapescope_hf_mha.json";
  std::ofstream(path) << R"({"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 16,
                             "intermediate_size": 5632})";
  const ModelSpec spec = model_from_hf_config(path, "mha");
  std::filesystem::remove(path);
  ASSERT_EQ(spec.layers.size(), 4u);
  EXPECT_EQ(spec.layers[0].name, "qkv_proj");
  EXPECT_EQ(spec.layers[0].n, 3 * 2048);  // no num_key_value_heads: plain multi-head attention
  EXPECT_EQ(spec.layers[1].k, 2048);
}

}  // namespace
}  // namespace shapescope
