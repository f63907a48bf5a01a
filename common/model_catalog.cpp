// Model catalog file format (models/<name>.json; README.md there says the same):
//
//   {
//     "name": "llama3_8b",                 // must equal the file name without .json
//     "source": "where the numbers come from",
//     "num_hidden_layers": 32,             // optional, decoder layers
//     "module_layers": {"gate_up_proj": 3}, // optional, modules that run in fewer layers than all
//     "format": "mxfp4",                   // optional, the weights' block format (default fp8_blockscale)
//     "layers": [
//       {"name": "gate_up_proj",           // module name, unique within the model
//        "k": 4096, "n": 28672,            // unsplit input / output features
//        "tp": "split_n",                  // split_n (column-parallel) | split_k (row-parallel) | replicated
//        "batch_count": 128,               // optional, batched GEMMs (default 1)
//        "batch_split_by_tp": true,        // optional, the batch (e.g. heads) is split across TP ranks
//        "experts": 256, "top_k": 8,       // optional, MoE experts per layer and experts per token
//        "expert_width": 2048,             // with experts: one expert's intermediate size (gate_up N = 2 x, down K = 1 x)
//        "shared_experts": 1,              // optional with experts: shared experts of the block (default 0)
//        "format": "bf16",                 // optional, this layer's format where it is not the model's
//        "note": "..."}                    // optional, free text
//     ]
//   }
//
// Unknown keys are rejected so a typo ("batch_cont") cannot silently fall back to a default.
#include "common/model_catalog.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

using nlohmann::json;

constexpr std::array<int, 4> kSupportedTp = {1, 2, 4, 8};
constexpr int64_t kScaleBlock = 128;  // block-scaled FP8 weights carry one scale per 128x128 block

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(fmt::format("cannot read {}; check the path", path.string()));
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

TpRule parse_tp_rule(const std::string& text, const std::string& where) {
  if (text == "split_n") return TpRule::split_n;
  if (text == "split_k") return TpRule::split_k;
  if (text == "replicated") return TpRule::replicated;
  throw UserError(fmt::format("{}: tp is '{}'; use split_n, split_k or replicated", where, text));
}

int64_t positive_integer(const json& object, const char* key, const std::string& where) {
  const json& value = object.at(key);
  if (!value.is_number_integer() || value.get<int64_t>() <= 0) {
    throw UserError(fmt::format("{}: '{}' is {}; it must be a positive integer", where, key, value.dump()));
  }
  return value.get<int64_t>();
}

std::string text_field(const json& object, const char* key, const std::string& where) {
  const json& value = object.at(key);
  if (!value.is_string()) throw UserError(fmt::format("{}: '{}' must be a string", where, key));
  return value.get<std::string>();
}

void require_keys(const json& object, const std::set<std::string>& required, const std::set<std::string>& optional,
                  const std::string& where) {
  if (!object.is_object()) throw UserError(fmt::format("{}: expected a JSON object", where));
  for (const std::string& key : required) {
    if (!object.contains(key)) throw UserError(fmt::format("{}: missing '{}'", where, key));
  }
  for (const auto& item : object.items()) {
    if (!required.contains(item.key()) && !optional.contains(item.key())) {
      throw UserError(fmt::format("{}: unknown key '{}'; valid keys are {}, {}", where, item.key(),
                                  fmt::join(required, ", "), fmt::join(optional, ", ")));
    }
  }
}

int64_t non_negative_integer(const json& object, const char* key, const std::string& where) {
  const json& value = object.at(key);
  if (!value.is_number_integer() || value.get<int64_t>() < 0) {
    throw UserError(fmt::format("{}: '{}' is {}; it must be 0 or a positive integer", where, key, value.dump()));
  }
  return value.get<int64_t>();
}

// expert_width and shared_experts belong to routed expert layers; the width is the layer's
// K (down) or half its N (gate and up fused).
void parse_expert_fields(const json& object, LinearLayer& layer, const std::string& where) {
  if (object.contains("expert_width")) layer.expert_width = positive_integer(object, "expert_width", where);
  if (object.contains("shared_experts")) layer.shared_experts = non_negative_integer(object, "shared_experts", where);
  if (layer.experts == 0) {
    if (layer.expert_width > 0 || layer.shared_experts > 0) {
      throw UserError(fmt::format("{}: expert_width and shared_experts describe routed experts; give experts and top_k "
                                  "too, or drop them",
                                  where));
    }
    return;
  }
  if (layer.expert_width == 0) {
    throw UserError(fmt::format("{}: a routed expert layer needs 'expert_width' (the expert's intermediate size)", where));
  }
  const bool width_fits = layer.tp_rule == TpRule::split_k ? layer.k == layer.expert_width
                                                           : layer.n == 2 * layer.expert_width || layer.n == layer.expert_width;
  if (!width_fits) {
    throw UserError(fmt::format("{}: expert_width {} matches neither K={} (down) nor N/2={} (gate and up fused); fix it",
                                where, layer.expert_width, layer.k, layer.n / 2));
  }
}

BlockFormatId format_field(const json& object, const std::string& where) {
  const std::string name = text_field(object, "format", where);
  try {
    return parse_block_format(name);
  } catch (const UserError& error) {
    throw UserError(fmt::format("{}: {}", where, error.what()));
  }
}

LinearLayer parse_layer(const json& object, const std::string& where, BlockFormatId model_format) {
  require_keys(object, {"name", "k", "n", "tp"},
               {"batch_count", "batch_split_by_tp", "experts", "top_k", "expert_width", "shared_experts", "format",
                "note"},
               where);
  LinearLayer layer;
  layer.format = object.contains("format") ? format_field(object, where) : model_format;
  layer.name = text_field(object, "name", where);
  const std::string layer_where = fmt::format("{} layer '{}'", where, layer.name);
  layer.k = positive_integer(object, "k", layer_where);
  layer.n = positive_integer(object, "n", layer_where);
  layer.tp_rule = parse_tp_rule(text_field(object, "tp", layer_where), layer_where);
  if (object.contains("batch_count")) layer.batch_count = positive_integer(object, "batch_count", layer_where);
  if (object.contains("batch_split_by_tp")) {
    if (!object.at("batch_split_by_tp").is_boolean()) {
      throw UserError(fmt::format("{}: 'batch_split_by_tp' must be true or false", layer_where));
    }
    layer.batch_split_by_tp = object.at("batch_split_by_tp").get<bool>();
  }
  if (object.contains("experts")) layer.experts = positive_integer(object, "experts", layer_where);
  if (object.contains("top_k")) layer.top_k = positive_integer(object, "top_k", layer_where);
  if ((layer.experts > 0) != (layer.top_k > 0) || layer.top_k > layer.experts) {
    throw UserError(fmt::format("{}: experts={} top_k={}; give both, with top_k <= experts", layer_where,
                                layer.experts, layer.top_k));
  }
  parse_expert_fields(object, layer, layer_where);
  if (object.contains("note")) layer.note = text_field(object, "note", layer_where);
  return layer;
}

// num_hidden_layers and module_layers: every module_layers key names a layer, and no
// module runs in more layers than the model has.
void parse_layer_counts(const json& document, const std::string& source, ModelSpec& spec) {
  if (document.contains("num_hidden_layers")) {
    spec.num_hidden_layers = positive_integer(document, "num_hidden_layers", source);
  }
  if (!document.contains("module_layers")) return;
  const json& counts = document.at("module_layers");
  if (!counts.is_object()) {
    throw UserError(fmt::format("{}: 'module_layers' must be an object {{module: layers}}", source));
  }
  if (spec.num_hidden_layers == 0) {
    throw UserError(fmt::format("{}: 'module_layers' needs 'num_hidden_layers' beside it", source));
  }
  for (const auto& item : counts.items()) {
    const bool known = std::any_of(spec.layers.begin(), spec.layers.end(),
                                   [&](const LinearLayer& layer) { return layer.name == item.key(); });
    if (!known) {
      throw UserError(
          fmt::format("{}: module_layers names '{}', which is not a layer of the model", source, item.key()));
    }
    const int64_t layers = positive_integer(counts, item.key().c_str(), source + " module_layers");
    if (layers > spec.num_hidden_layers) {
      throw UserError(fmt::format("{}: module_layers '{}' is {}, more than num_hidden_layers {}", source, item.key(),
                                  layers, spec.num_hidden_layers));
    }
    spec.module_layers[item.key()] = layers;
  }
}

// The valid TP degrees that divide `value`, as "1, 2 or 4".
std::string dividing_tps(int64_t value) {
  std::vector<int> tps;
  for (const int tp : kSupportedTp) {
    if (value % tp == 0) tps.push_back(tp);
  }
  if (tps.size() == 1) return fmt::format("{}", tps.front());
  return fmt::format("{} or {}", fmt::join(tps.begin(), tps.end() - 1, ", "), tps.back());
}

// Splits `value` (a dimension named `dimension`) across `tp` ranks.
int64_t split(const std::string& model, const LinearLayer& layer, const char* dimension, int64_t value, int tp) {
  if (value % tp != 0) {
    throw UserError(fmt::format("{} {}: {}={} is not divisible by tp={}; use --tp {}", model, layer.name, dimension,
                                value, tp, dividing_tps(value)));
  }
  return value / tp;
}

// The divisors of `experts` up to 64 that --ep may take, as "1, 2, 4 or 8".
std::string dividing_eps(int64_t experts) {
  std::vector<int64_t> eps;
  for (int64_t ep = 1; ep <= std::min<int64_t>(experts, 64); ++ep)
    if (experts % ep == 0) eps.push_back(ep);
  if (eps.size() == 1) return fmt::format("{}", eps.front());
  return fmt::format("{} or {}", fmt::join(eps.begin(), eps.end() - 1, ", "), eps.back());
}

// The layer as the checkpoint has it (N and K unsplit, every routed expert on the profiled GPU), profiled at `tp`.
GemmProblem unsplit_problem(const std::string& model, const LinearLayer& layer, int tp) {
  GemmProblem problem;
  problem.model = model;
  problem.module = layer.name;
  problem.tp = tp;
  problem.n = layer.n;
  problem.k = layer.k;
  problem.experts = layer.experts;
  problem.top_k = layer.top_k;
  problem.expert_width = layer.expert_width;
  problem.shared_experts = layer.shared_experts;
  problem.local_experts = layer.experts;
  problem.format = layer.format;
  return problem;
}

// Expert parallelism: whole experts per rank, N and K as the checkpoint has them.
GemmProblem expert_parallel_problem(const std::string& model, const LinearLayer& layer, int tp, int ep) {
  if (layer.experts % ep != 0) {
    throw UserError(fmt::format("{} {}: {} experts do not split over ep={} ranks; use --ep {}", model, layer.name,
                                layer.experts, ep, dividing_eps(layer.experts)));
  }
  GemmProblem problem = unsplit_problem(model, layer, tp);
  problem.ep = ep;
  problem.local_experts = layer.experts / ep;
  return problem;
}

GemmProblem problem_for(const std::string& model, const LinearLayer& layer, int tp, int ep) {
  if (layer.experts > 0 && ep > 1) return expert_parallel_problem(model, layer, tp, ep);
  GemmProblem problem = unsplit_problem(model, layer, tp);
  problem.batch_count = layer.batch_count;
  int64_t unsplit = 0;
  int64_t* split_dimension = nullptr;
  if (layer.tp_rule == TpRule::split_n) {
    unsplit = layer.n;
    problem.n = split(model, layer, "N", layer.n, tp);
    split_dimension = &problem.n;
  } else if (layer.tp_rule == TpRule::split_k) {
    unsplit = layer.k;
    problem.k = split(model, layer, "K", layer.k, tp);
    split_dimension = &problem.k;
  }
  if (layer.batch_split_by_tp) problem.batch_count = split(model, layer, "batch_count", layer.batch_count, tp);
  // A fused gate and up projection is cut where each half is: its expert width.
  if (layer.expert_width > 0 && split_dimension != nullptr) {
    unsplit = layer.expert_width;
    problem.cuts_scale_block = unsplit % kScaleBlock == 0 && (unsplit / tp) % kScaleBlock != 0;
  } else {
    problem.cuts_scale_block =
        split_dimension != nullptr && unsplit % kScaleBlock == 0 && *split_dimension % kScaleBlock != 0;
  }
  return problem;
}

std::vector<std::string> model_names(const std::vector<ModelSpec>& models) {
  std::vector<std::string> names;
  for (const ModelSpec& spec : models) names.push_back(spec.name);
  return names;
}

// Where the executable lives, for finding the catalog beside a build tree.
std::filesystem::path executable_directory() {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : exe.parent_path();
}

}  // namespace

std::string to_string(TpRule rule) {
  switch (rule) {
    case TpRule::split_n:
      return "split_n";
    case TpRule::split_k:
      return "split_k";
    case TpRule::replicated:
      return "replicated";
  }
  return "unknown";
}

ModelSpec parse_model_json(const std::string& json_text, const std::string& source) {
  json document;
  try {
    document = json::parse(json_text);
  } catch (const json::parse_error& error) {
    throw UserError(fmt::format("{}: invalid JSON ({}); fix the file", source, error.what()));
  }
  require_keys(document, {"name", "source", "layers"}, {"num_hidden_layers", "module_layers", "format"}, source);
  const BlockFormatId model_format =
      document.contains("format") ? format_field(document, source) : BlockFormatId::fp8_blockscale;
  ModelSpec spec;
  spec.name = text_field(document, "name", source);
  spec.source = text_field(document, "source", source);
  const json& layers = document.at("layers");
  if (!layers.is_array() || layers.empty()) {
    throw UserError(fmt::format("{}: 'layers' must be a non-empty array", source));
  }
  std::set<std::string> seen;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    LinearLayer layer = parse_layer(layers[i], fmt::format("{}: layers[{}]", source, i), model_format);
    if (!seen.insert(layer.name).second) {
      throw UserError(fmt::format("{}: layer '{}' appears twice; give each layer a unique name", source, layer.name));
    }
    spec.layers.push_back(std::move(layer));
  }
  parse_layer_counts(document, source, spec);
  return spec;
}

int64_t layers_running(const ModelSpec& spec, const std::string& module) {
  if (spec.num_hidden_layers <= 0) {
    throw UserError(fmt::format("model {} does not state num_hidden_layers; add it to its catalog file ({})", spec.name,
                                spec.source));
  }
  const auto found = spec.module_layers.find(module);
  return found == spec.module_layers.end() ? spec.num_hidden_layers : found->second;
}

ModelCatalog ModelCatalog::load(const std::filesystem::path& directory) {
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    throw UserError(fmt::format("model catalog folder {} does not exist; point SHAPESCOPE_MODELS_DIR at the repository's models/ folder",
                                directory.string()));
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ModelCatalog catalog;
  for (const auto& file : files) {
    ModelSpec spec = parse_model_json(read_text(file), file.string());
    if (spec.name != file.stem().string()) {
      throw UserError(fmt::format("{}: name is '{}'; rename the file to {}.json or fix the name", file.string(),
                                  spec.name, spec.name));
    }
    catalog.add(std::move(spec));
  }
  return catalog;
}

ModelCatalog ModelCatalog::load_default() {
  if (const char* override_directory = std::getenv("SHAPESCOPE_MODELS_DIR")) return load(override_directory);
  std::vector<std::filesystem::path> candidates;
  const std::filesystem::path exe_directory = executable_directory();
  if (!exe_directory.empty()) {
    candidates.push_back(exe_directory / "../../models");  // build/bin
    candidates.push_back(exe_directory / "../models");
  }
  candidates.push_back(std::filesystem::path(SHAPESCOPE_SOURCE_DIR) / "models");
  std::error_code error;
  for (const auto& candidate : candidates) {
    if (std::filesystem::is_directory(candidate, error)) return load(candidate.lexically_normal());
  }
  std::vector<std::string> looked;
  for (const auto& candidate : candidates) looked.push_back(candidate.lexically_normal().string());
  throw UserError(fmt::format("no model catalog found (looked in {}); set SHAPESCOPE_MODELS_DIR to the repository's models/ folder",
                              fmt::join(looked, ", ")));
}

void ModelCatalog::add(ModelSpec spec) {
  for (const ModelSpec& existing : models_) {
    if (existing.name == spec.name) {
      throw UserError(fmt::format("model '{}' is defined twice ({} and {}); keep one", spec.name, existing.source,
                                  spec.source));
    }
  }
  models_.push_back(std::move(spec));
}

const ModelSpec& ModelCatalog::model(const std::string& name) const {
  for (const ModelSpec& spec : models_) {
    if (spec.name == name) return spec;
  }
  throw UserError(fmt::format("unknown model '{}'; valid models: {}", name, fmt::join(model_names(models_), ", ")));
}

std::vector<GemmProblem> ModelCatalog::problems(const std::string& model_name, const std::string& module, int tp,
                                                int ep) const {
  const ModelSpec& spec = model(model_name);
  if (tp < 1) throw UserError(fmt::format("tp={} is not a TP degree; use --tp 1, 2, 4 or 8", tp));
  if (ep < 1) throw UserError(fmt::format("ep={} is not an expert-parallel degree; use --ep 1 or more", ep));
  const bool has_experts = std::any_of(spec.layers.begin(), spec.layers.end(),
                                       [](const LinearLayer& layer) { return layer.experts > 0; });
  if (module == kExpertsModule && !has_experts) {
    throw UserError(fmt::format("{} has no routed expert layers, so --module {} selects nothing; pick a module of "
                                "{} or an MoE model",
                                spec.name, kExpertsModule, spec.name));
  }
  std::vector<const LinearLayer*> selected;
  for (const LinearLayer& layer : spec.layers) {
    const bool chosen = module == "all" || layer.name == module || (module == kExpertsModule && layer.experts > 0);
    if (chosen) selected.push_back(&layer);
  }
  if (selected.empty()) {
    std::vector<std::string> modules;
    for (const LinearLayer& layer : spec.layers) modules.push_back(layer.name);
    throw UserError(fmt::format("unknown module '{}' for {}; valid modules: {}, {}all", module, spec.name,
                                fmt::join(modules, ", "), has_experts ? fmt::format("{}, ", kExpertsModule) : ""));
  }
  if (ep > 1 && std::none_of(selected.begin(), selected.end(), [](const LinearLayer* layer) { return layer->experts > 0; })) {
    throw UserError(fmt::format("--ep {} applies to routed experts, but {} --module {} has none; drop --ep or pick {}",
                                ep, spec.name, module,
                                has_experts ? fmt::format("--module {}", kExpertsModule) : std::string("an MoE model")));
  }
  std::vector<GemmProblem> problems;
  for (const LinearLayer* layer : selected) problems.push_back(problem_for(spec.name, *layer, tp, ep));
  // Divisibility is checked first: it names the layer, which says more than "unsupported".
  if (std::find(kSupportedTp.begin(), kSupportedTp.end(), tp) == kSupportedTp.end()) {
    throw UserError(fmt::format("tp={} is not supported; use --tp 1, 2, 4 or 8", tp));
  }
  return problems;
}

}  // namespace shapescope
