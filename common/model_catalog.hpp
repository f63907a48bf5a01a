// The GEMM shapes of each model's linear layers (models/*.json) and
// how tensor parallelism splits them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/block_format.hpp"

namespace shapescope {

enum class TpRule {
  split_n,     // column-parallel: each rank holds N/tp output features
  split_k,     // row-parallel: each rank holds K/tp input features
  replicated,  // every rank holds the whole weight
};

struct LinearLayer {
  std::string name;         // module name, e.g. "gate_up_proj"
  int64_t k = 0;            // input features (unsplit)
  int64_t n = 0;            // output features (unsplit)
  TpRule tp_rule = TpRule::split_n;
  int64_t batch_count = 1;  // batched GEMMs (absorbed MLA: heads, split across TP)
  bool batch_split_by_tp = false;
  int64_t experts = 0;      // MoE: routed experts per layer (0 = dense)
  int64_t top_k = 0;        // MoE: experts per token
  int64_t expert_width = 0; // MoE: one expert's intermediate size (gate_up: N = 2 x width; down: K = width)
  int64_t shared_experts = 0;  // MoE: shared experts of the block (every token; they run as the shared_expert_* layers)
  BlockFormatId format = BlockFormatId::fp8_blockscale;  // how the checkpoint stores the weights
  std::string note;
};

struct ModelSpec {
  std::string name;         // e.g. "llama3_8b"
  std::string source;       // where the numbers come from
  std::vector<LinearLayer> layers;
  int64_t num_hidden_layers = 0;                 // decoder layers; 0 when the source does not say
  std::map<std::string, int64_t> module_layers;  // modules that skip some layers: the layers they run in
};

// How many decoder layers run `module`: its module_layers entry, else every layer.
// Throws UserError when the model does not state num_hidden_layers.
int64_t layers_running(const ModelSpec& spec, const std::string& module);

// One GEMM to profile: a layer at a TP degree.
struct GemmProblem {
  std::string model;
  std::string module;
  int tp = 1;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch_count = 1;
  int64_t experts = 0;
  int64_t top_k = 0;
  int64_t expert_width = 0;    // per expert, unsplit
  int64_t shared_experts = 0;
  // Expert parallelism (routed expert layers only): ep ranks hold experts/ep whole experts
  // each (N and K unsplit, no TP inside an expert); 1 = none, experts split by TP instead.
  int ep = 1;
  int64_t local_experts = 0;   // routed experts on the profiled GPU (rank 0): experts/ep, or all of them under TP
  // The TP split cuts a 128x128 weight-scale block (e.g. N/tp = 192): block-scaled
  // kernels then see a partial block at the split edge.
  bool cuts_scale_block = false;
  BlockFormatId format = BlockFormatId::fp8_blockscale;  // the layer's format, or --operand-format's
};

class ModelCatalog {
 public:
  // Reads every *.json in `directory`; throws UserError on malformed files.
  static ModelCatalog load(const std::filesystem::path& directory);
  // The catalog shipped in models, found relative to the executable or the source tree.
  static ModelCatalog load_default();

  void add(ModelSpec spec);
  const std::vector<ModelSpec>& models() const { return models_; }
  // Throws UserError listing the valid model names.
  const ModelSpec& model(const std::string& name) const;
  // module "all" gives every layer, "experts" the routed expert layers. Throws UserError
  // listing valid modules, or naming the layer and dimension a TP degree does not divide.
  // ep > 1 applies expert parallelism to the routed expert layers: it must divide their
  // experts, and the selection must hold some.
  std::vector<GemmProblem> problems(const std::string& model, const std::string& module, int tp, int ep = 1) const;

 private:
  std::vector<ModelSpec> models_;
};

ModelSpec parse_model_json(const std::string& json_text, const std::string& source);
std::string to_string(TpRule rule);

// The --module value that selects every routed expert layer (profiled as grouped GEMMs).
inline constexpr const char* kExpertsModule = "experts";

// Derives a model's layers from a Hugging Face config.json (Llama, Qwen3, Qwen2-MoE/Qwen3-MoE, Mixtral,
// gpt-oss, DeepSeek-V2/V3 styles).
ModelSpec model_from_hf_config(const std::filesystem::path& config_json, const std::string& name);

}  // namespace shapescope
