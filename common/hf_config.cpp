// Derives a model's linear layers from a Hugging Face config.json, with the same
// layer names and TP rules as the catalog's JSON files (models/).
#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/model_catalog.hpp"
#include "common/user_error.hpp"

namespace shapescope {

namespace {

using nlohmann::json;

const std::vector<std::string> kLlamaStyle = {"llama", "mistral", "qwen2", "qwen3"};
const std::vector<std::string> kQwenMoeStyle = {"qwen2_moe", "qwen3_moe"};
// GQA attention and routed experts as wide as intermediate_size, no shared expert.
const std::vector<std::string> kLocalExpertsStyle = {"mixtral", "gpt_oss"};
const std::vector<std::string> kDeepseekStyle = {"deepseek_v3", "deepseek_v2"};

bool one_of(const std::string& value, const std::vector<std::string>& choices) {
  return std::find(choices.begin(), choices.end(), value) != choices.end();
}

// Typed access to config keys; every error names the file and the key.
class Config {
 public:
  Config(json document, std::string path) : document_(std::move(document)), path_(std::move(path)) {}

  // A size the model cannot do without: present and positive.
  int64_t integer(const char* key) const {
    const std::optional<int64_t> value = optional_integer(key);
    if (!value) throw UserError(fmt::format("{}: missing '{}'; is this a Hugging Face config.json?", path_, key));
    if (*value == 0) throw UserError(fmt::format("{}: '{}' is 0; expected a positive size", path_, key));
    return *value;
  }

  // Absent or null keys (DeepSeek-V2-Lite has "q_lora_rank": null) read as nullopt.
  std::optional<int64_t> optional_integer(const char* key) const {
    if (!document_.contains(key) || document_.at(key).is_null()) return std::nullopt;
    const json& value = document_.at(key);
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      throw UserError(fmt::format("{}: '{}' is {}; expected a non-negative integer", path_, key, value.dump()));
    }
    return value.get<int64_t>();
  }

  std::string text(const char* key) const {
    if (!document_.contains(key) || !document_.at(key).is_string()) {
      throw UserError(fmt::format("{}: missing '{}' (a string); is this a Hugging Face config.json?", path_, key));
    }
    return document_.at(key).get<std::string>();
  }

  bool has_nonempty_array(const char* key) const {
    return document_.contains(key) && document_.at(key).is_array() && !document_.at(key).empty();
  }

  // An absent key reads as an empty list.
  std::vector<int64_t> integer_list(const char* key) const {
    std::vector<int64_t> values;
    if (!document_.contains(key) || document_.at(key).is_null()) return values;
    const json& list = document_.at(key);
    const auto not_integer = [](const json& value) { return !value.is_number_integer(); };
    if (!list.is_array() || std::any_of(list.begin(), list.end(), not_integer)) {
      throw UserError(fmt::format("{}: '{}' is {}; expected a list of integers", path_, key, list.dump()));
    }
    for (const json& value : list) values.push_back(value.get<int64_t>());
    return values;
  }

  const std::string& path() const { return path_; }
  const json& document() const { return document_; }

 private:
  json document_;
  std::string path_;
};

LinearLayer layer(std::string name, int64_t k, int64_t n, TpRule rule) {
  LinearLayer result;
  result.name = std::move(name);
  result.k = k;
  result.n = n;
  result.tp_rule = rule;
  return result;
}

struct RoutedExperts {
  int64_t experts = 0, top_k = 0, width = 0, shared_experts = 0;
};

LinearLayer expert_layer(std::string name, int64_t k, int64_t n, TpRule rule, const RoutedExperts& routed) {
  LinearLayer result = layer(std::move(name), k, n, rule);
  result.experts = routed.experts;
  result.top_k = routed.top_k;
  result.expert_width = routed.width;
  result.shared_experts = routed.shared_experts;
  return result;
}

// A batched GEMM with one weight per attention head; TP splits the heads.
LinearLayer per_head_layer(std::string name, int64_t k, int64_t n, int64_t heads) {
  LinearLayer result = layer(std::move(name), k, n, TpRule::replicated);
  result.batch_count = heads;
  result.batch_split_by_tp = true;
  return result;
}

// Grouped-query attention: fused q/k/v projection and the output projection.
void add_gqa_attention(const Config& config, std::vector<LinearLayer>& layers) {
  const int64_t hidden = config.integer("hidden_size");
  const int64_t heads = config.integer("num_attention_heads");
  const int64_t kv_heads = config.optional_integer("num_key_value_heads").value_or(heads);
  const int64_t head_dim = config.optional_integer("head_dim").value_or(hidden / heads);
  layers.push_back(layer("qkv_proj", hidden, (heads + 2 * kv_heads) * head_dim, TpRule::split_n));
  layers.push_back(layer("o_proj", heads * head_dim, hidden, TpRule::split_k));
}

void add_dense_mlp(const std::string& prefix, int64_t hidden, int64_t intermediate, std::vector<LinearLayer>& layers) {
  layers.push_back(layer(prefix + "gate_up_proj", hidden, 2 * intermediate, TpRule::split_n));
  layers.push_back(layer(prefix + "down_proj", intermediate, hidden, TpRule::split_k));
}

// Routed experts are split by TP like vLLM's default (expert parallelism is opt-in there).
void add_routed_experts(int64_t hidden, const RoutedExperts& routed, std::vector<LinearLayer>& layers) {
  layers.push_back(expert_layer("moe_gate_up_proj", hidden, 2 * routed.width, TpRule::split_n, routed));
  layers.push_back(expert_layer("moe_down_proj", routed.width, hidden, TpRule::split_k, routed));
}

std::vector<LinearLayer> llama_layers(const Config& config) {
  std::vector<LinearLayer> layers;
  add_gqa_attention(config, layers);
  add_dense_mlp("", config.integer("hidden_size"), config.integer("intermediate_size"), layers);
  return layers;
}

// Qwen2-MoE (Qwen1.5-MoE, Qwen2-57B-A14B) and Qwen3-MoE; Qwen2-MoE adds one gated shared expert
// of shared_expert_intermediate_size beside the routed ones.
std::vector<LinearLayer> qwen_moe_layers(const Config& config) {
  const int64_t hidden = config.integer("hidden_size");
  std::vector<LinearLayer> layers;
  add_gqa_attention(config, layers);
  // Dense MLP layers exist only when some layers are listed as MLP-only or sparsity skips layers.
  const bool has_dense_layers =
      config.has_nonempty_array("mlp_only_layers") || config.optional_integer("decoder_sparse_step").value_or(1) > 1;
  if (has_dense_layers) add_dense_mlp("", hidden, config.integer("intermediate_size"), layers);
  RoutedExperts routed{config.integer("num_experts"), config.integer("num_experts_per_tok"),
                       config.integer("moe_intermediate_size"), 0};
  const int64_t shared_width = config.optional_integer("shared_expert_intermediate_size").value_or(0);
  if (shared_width > 0) {
    routed.shared_experts = 1;
    add_dense_mlp("shared_expert_", hidden, shared_width, layers);
  }
  add_routed_experts(hidden, routed, layers);
  return layers;
}

// Mixtral and gpt-oss: every layer's MLP is routed experts of intermediate_size.
std::vector<LinearLayer> local_experts_layers(const Config& config) {
  std::vector<LinearLayer> layers;
  add_gqa_attention(config, layers);
  // gpt-oss names the top-k experts_per_token (its config carries both spellings).
  const std::optional<int64_t> top_k = config.optional_integer("num_experts_per_tok");
  const RoutedExperts routed{config.integer("num_local_experts"),
                             top_k && *top_k > 0 ? *top_k : config.integer("experts_per_token"),
                             config.integer("intermediate_size"), 0};
  add_routed_experts(config.integer("hidden_size"), routed, layers);
  return layers;
}

// Multi-head latent attention with the absorbed (weight-folded) decode path, plus DeepSeek's MoE.
std::vector<LinearLayer> deepseek_layers(const Config& config) {
  const int64_t hidden = config.integer("hidden_size");
  const int64_t heads = config.integer("num_attention_heads");
  const int64_t kv_lora = config.integer("kv_lora_rank");
  const int64_t nope = config.integer("qk_nope_head_dim");
  const int64_t rope = config.integer("qk_rope_head_dim");
  const int64_t v_head = config.integer("v_head_dim");
  const std::optional<int64_t> q_lora = config.optional_integer("q_lora_rank");
  std::vector<LinearLayer> layers;
  if (q_lora) {
    layers.push_back(layer("fused_qkv_a_proj", hidden, *q_lora + kv_lora + rope, TpRule::replicated));
    layers.push_back(layer("q_b_proj", *q_lora, heads * (nope + rope), TpRule::split_n));
  } else {
    layers.push_back(layer("kv_a_proj_with_mqa", hidden, kv_lora + rope, TpRule::replicated));
    layers.push_back(layer("q_proj", hidden, heads * (nope + rope), TpRule::split_n));
  }
  layers.push_back(layer("kv_b_proj", kv_lora, heads * (nope + v_head), TpRule::split_n));
  layers.push_back(layer("o_proj", heads * v_head, hidden, TpRule::split_k));
  if (config.optional_integer("first_k_dense_replace").value_or(0) > 0) {
    add_dense_mlp("", hidden, config.integer("intermediate_size"), layers);
  }
  const int64_t moe_intermediate = config.integer("moe_intermediate_size");
  const int64_t shared_experts = config.optional_integer("n_shared_experts").value_or(0);
  if (shared_experts > 0) add_dense_mlp("shared_expert_", hidden, shared_experts * moe_intermediate, layers);
  add_routed_experts(hidden,
                     RoutedExperts{config.integer("n_routed_experts"), config.integer("num_experts_per_tok"),
                                   moe_intermediate, shared_experts},
                     layers);
  layers.push_back(per_head_layer("mla_absorb_q", nope, kv_lora, heads));
  layers.push_back(per_head_layer("mla_absorb_out", kv_lora, v_head, heads));
  return layers;
}

// Decoder layers with routed experts: DeepSeek style (dense before first_k_dense_replace,
// then every moe_layer_freq-th layer) and Qwen MoE style (every decoder_sparse_step-th
// layer, except mlp_only_layers), as the two families' modeling code decides.
int64_t deepseek_moe_layer_count(const Config& config, int64_t layers) {
  const int64_t first_dense = config.optional_integer("first_k_dense_replace").value_or(0);
  const int64_t frequency = std::max<int64_t>(config.optional_integer("moe_layer_freq").value_or(1), 1);
  int64_t moe = 0;
  for (int64_t i = first_dense; i < layers; ++i) moe += i % frequency == 0;
  return moe;
}

int64_t qwen_moe_layer_count(const Config& config, int64_t layers) {
  const std::vector<int64_t> dense_only = config.integer_list("mlp_only_layers");
  const int64_t step = std::max<int64_t>(config.optional_integer("decoder_sparse_step").value_or(1), 1);
  int64_t moe = 0;
  for (int64_t i = 0; i < layers; ++i) {
    moe += (i + 1) % step == 0 && std::find(dense_only.begin(), dense_only.end(), i) == dense_only.end();
  }
  return moe;
}

// Experts (routed and shared) run in the MoE layers, the dense MLP in the others;
// module_layers lists only modules that skip some layers.
void record_layer_counts(int64_t moe_layers, ModelSpec& spec) {
  for (const LinearLayer& layer : spec.layers) {
    const bool expert = layer.experts > 0 || layer.name.rfind("shared_expert_", 0) == 0;
    const bool dense_mlp = layer.name == "gate_up_proj" || layer.name == "down_proj";
    if (!expert && !dense_mlp) continue;
    const int64_t count = expert ? moe_layers : spec.num_hidden_layers - moe_layers;
    if (count != spec.num_hidden_layers) spec.module_layers[layer.name] = count;
  }
}

bool is_attention(const std::string& layer) {
  static const std::vector<std::string> names = {"qkv_proj",         "o_proj",   "fused_qkv_a_proj", "q_b_proj",
                                                 "kv_b_proj",        "q_proj",   "kv_a_proj_with_mqa",
                                                 "mla_absorb_q",     "mla_absorb_out"};
  return one_of(layer, names);
}

// The module names a quantization config leaves unquantized (modules_to_not_convert, exclude_modules: glob-like
// patterns such as "model.layers.*.self_attn"): attention when one names self_attn.
bool excludes_attention(const json& quantization, const char* key) {
  if (!quantization.contains(key) || !quantization.at(key).is_array()) return false;
  for (const json& pattern : quantization.at(key))
    if (pattern.is_string() && pattern.get<std::string>().find("self_attn") != std::string::npos) return true;
  return false;
}

// Each layer's block format from quantization_config: quant_method fp8 (DeepSeek's 128x128 blocks), mxfp4
// (gpt-oss), modelopt with quant_algo NVFP4 and group_size 16 (NVIDIA's FP4 checkpoints); the layers a config
// leaves unquantized are bf16. Without quantization_config the layers keep the catalog's default.
void apply_quantization(const Config& config, ModelSpec& spec) {
  const json& document = config.document();
  if (!document.contains("quantization_config") || document.at("quantization_config").is_null()) return;
  const json& quantization = document.at("quantization_config");
  const auto text_of = [&](const char* key) {
    return quantization.contains(key) && quantization.at(key).is_string() ? quantization.at(key).get<std::string>()
                                                                          : std::string();
  };
  const std::string method = text_of("quant_method");
  BlockFormatId format;
  bool attention_bf16 = false;
  if (method == "fp8") {
    format = BlockFormatId::fp8_blockscale;
  } else if (method == "mxfp4") {
    format = BlockFormatId::mxfp4;
    attention_bf16 = excludes_attention(quantization, "modules_to_not_convert");
  } else if (method == "modelopt" && text_of("quant_algo") == "NVFP4") {
    const json group_size = quantization.value("group_size", json(16));
    if (group_size != json(16)) {
      throw UserError(fmt::format("{}: quantization_config group_size {} with quant_algo NVFP4; NVFP4 scales 16 "
                                  "elements (add the model as models/<name>.json for another recipe)",
                                  config.path(), group_size.dump()));
    }
    format = BlockFormatId::nvfp4;
    attention_bf16 = excludes_attention(quantization, "exclude_modules");
  } else {
    const std::string algo = text_of("quant_algo");
    throw UserError(fmt::format("{}: quantization_config quant_method '{}'{} is not supported (supported: fp8, mxfp4, "
                                "modelopt with quant_algo NVFP4); add the model as models/<name>.json instead",
                                config.path(), method, algo.empty() ? "" : fmt::format(" quant_algo '{}'", algo)));
  }
  for (LinearLayer& layer : spec.layers) layer.format = attention_bf16 && is_attention(layer.name) ? BlockFormatId::bf16 : format;
}

}  // namespace

ModelSpec model_from_hf_config(const std::filesystem::path& config_json, const std::string& name) {
  std::ifstream in(config_json, std::ios::binary);
  if (!in) throw UserError(fmt::format("cannot read {}; pass --hf-config <path to config.json>", config_json.string()));
  std::ostringstream content;
  content << in.rdbuf();
  json document;
  try {
    document = json::parse(content.str());
  } catch (const json::parse_error& error) {
    throw UserError(fmt::format("{}: invalid JSON ({}); pass a Hugging Face config.json", config_json.string(),
                                error.what()));
  }
  const Config config(std::move(document), config_json.string());
  const std::string model_type = config.text("model_type");

  ModelSpec spec;
  spec.name = name;
  spec.source = fmt::format("Hugging Face config {} (model_type {})", config_json.string(), model_type);
  spec.num_hidden_layers = config.optional_integer("num_hidden_layers").value_or(0);
  if (one_of(model_type, kLlamaStyle)) {
    spec.layers = llama_layers(config);
  } else if (one_of(model_type, kQwenMoeStyle)) {
    spec.layers = qwen_moe_layers(config);
    record_layer_counts(qwen_moe_layer_count(config, spec.num_hidden_layers), spec);
  } else if (one_of(model_type, kLocalExpertsStyle)) {
    spec.layers = local_experts_layers(config);  // every layer's MLP is the experts: no per-module counts
  } else if (one_of(model_type, kDeepseekStyle)) {
    spec.layers = deepseek_layers(config);
    record_layer_counts(deepseek_moe_layer_count(config, spec.num_hidden_layers), spec);
  } else {
    throw UserError(fmt::format("{}: model_type '{}' is not supported (supported: {}, {}, {}, {}); add the model as "
                                "models/<name>.json instead",
                                config.path(), model_type, fmt::join(kLlamaStyle, ", "),
                                fmt::join(kQwenMoeStyle, ", "), fmt::join(kLocalExpertsStyle, ", "),
                                fmt::join(kDeepseekStyle, ", ")));
  }
  apply_quantization(config, spec);
  return spec;
}

}  // namespace shapescope
