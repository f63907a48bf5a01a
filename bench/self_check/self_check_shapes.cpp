#include "bench/self_check/self_check_shapes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <string_view>

#include "common/block_format.hpp"
#include "common/csv.hpp"
#include "common/shape_axes.hpp"
#include "common/user_error.hpp"

namespace shapescope::self_check {

bool CheckShape::in_catalog() const {
  return std::any_of(uses.begin(), uses.end(), [](const ShapeUse& use) { return use.catalog; });
}

bool CheckShape::outside_catalog() const {
  return std::any_of(uses.begin(), uses.end(), [](const ShapeUse& use) { return !use.catalog; });
}

CheckShape& ShapeList::shape(int64_t n, int64_t k) {
  const auto at = std::lower_bound(shapes.begin(), shapes.end(), std::pair{n, k},
                                   [](const CheckShape& s, const std::pair<int64_t, int64_t>& key) {
                                     return std::pair{s.n, s.k} < key;
                                   });
  if (at != shapes.end() && at->n == n && at->k == k) return *at;
  return *shapes.insert(at, CheckShape{n, k, {}});
}

bool ShapeList::sweeps(int64_t n, int64_t k) const {
  return std::any_of(shapes.begin(), shapes.end(), [&](const CheckShape& s) { return s.n == n && s.k == k; });
}

namespace {

void add_use(CheckShape& shape, const ShapeUse& use) {
  if (std::find(shape.uses.begin(), shape.uses.end(), use) == shape.uses.end()) shape.uses.push_back(use);
}

// Why the self-check does not sweep this layer at this TP, or "" when it does.
std::string reason_left_out(const GemmProblem& problem) {
  if (problem.format != BlockFormatId::fp8_blockscale)
    return fmt::format("stored as {}, not FP8 block-scaled", to_string(problem.format));
  if (problem.batch_count != 1)
    return fmt::format("batched (batch_count {}): neither kernel runs batched GEMMs", problem.batch_count);
  if (problem.cuts_scale_block)
    return "the TP split cuts a 128x128 scale block: profile refuses it unless --cut-scale-block allow";
  return "";
}

}  // namespace

void add_model_shapes(ShapeList& list, const ModelCatalog& catalog, bool its_catalog) {
  for (const ModelSpec& model : catalog.models()) {
    for (const LinearLayer& layer : model.layers) {
      for (const int tp : kTpDegrees) {
        const ShapeUse use{model.name, layer.name, tp, its_catalog};
        GemmProblem problem;
        try {
          // One module at a time: the layers `--module all` lists, each on its own (a TP degree that one layer's
          // dimension cannot be split by leaves that layer out, not the model).
          problem = catalog.problems(model.name, layer.name, tp).front();
        } catch (const UserError& error) {
          list.left_out.push_back({use, layer.n, layer.k, error.what()});
          continue;
        }
        if (const std::string reason = reason_left_out(problem); !reason.empty()) {
          list.left_out.push_back({use, problem.n, problem.k, reason});
          continue;
        }
        add_use(list.shape(problem.n, problem.k), use);
      }
    }
  }
}

void add_raw_shapes(ShapeList& list, const std::string& text) {
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t end = std::min(rest.find(';'), rest.size());
    const std::string entry(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
    const GemmProblem problem = parse_shape(entry, "--shapes");
    if (problem.batch_count != 1)
      throw UserError(
          fmt::format("--shapes {}: give N,K pairs without a batch (neither kernel runs batched GEMMs)", entry));
    add_use(list.shape(problem.n, problem.k), ShapeUse{"--shapes", entry, 0, false});
  }
  if (text.empty()) throw UserError("--shapes is empty; give N,K;N,K");
}

const std::vector<NamedShape>& named_extra_shapes() {
  // Real models with no file in models/, each at a TP degree where the split keeps whole 128x128 blocks.
  static const std::vector<NamedShape> shapes{
      {7168, 12288, "mistral_large_2", "gate_up_proj", 8,
       "Mistral-Large-Instruct-2407 config.json: hidden_size 12288, intermediate_size 28672 (gate+up 57344 / TP8)"},
      {2048, 5120, "llama4_scout_17b_16e", "moe_gate_up_proj", 8,
       "Llama-4-Scout-17B-16E config.json: hidden_size 5120, expert intermediate_size 8192 (gate+up 16384 / TP8)"},
      {4608, 9216, "gemma2_27b", "down_proj", 4,
       "gemma-2-27b config.json: hidden_size 4608, intermediate_size 36864 (K 36864 / TP4)"},
  };
  return shapes;
}

void add_named_extras(ShapeList& list) {
  for (const NamedShape& named : named_extra_shapes())
    add_use(list.shape(named.n, named.k), ShapeUse{named.model, named.module, named.tp, false});
}

std::string uses_text(const CheckShape& shape) {
  std::vector<std::string> uses;
  for (const ShapeUse& use : shape.uses)
    uses.push_back(use.tp > 0 ? fmt::format("{}/{}/tp{}", use.model, use.module, use.tp)
                              : fmt::format("{}/{}", use.model, use.module));
  return fmt::format("{}", fmt::join(uses, " "));
}

std::string shape_list_text(const ShapeList& list) {
  std::string text = "n,k,catalog,uses\n";
  for (const CheckShape& shape : list.shapes)
    text += fmt::format("{},{},{},{}\n", shape.n, shape.k, shape.in_catalog() ? "yes" : "no", uses_text(shape));
  text += "\nleft out: model,module,tp,n,k,swept_for_another_layer,why\n";
  for (const LeftOut& layer : list.left_out)
    text += fmt::format("{},{},{},{},{},{},{}\n", layer.use.model, layer.use.module, layer.use.tp, layer.n, layer.k,
                        list.sweeps(layer.n, layer.k) ? "yes" : "no", csv::quote(layer.reason));
  return text;
}

}  // namespace shapescope::self_check
