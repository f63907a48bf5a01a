// Which GEMM shapes the self-check sweeps: every distinct (N, K) that `profile --model X --module all --tp T`
// runs for the catalog's FP8 block-scaled layers at TP 1, 2, 4 and 8 (routed experts as their per-expert dense
// shape), plus shapes of models outside the catalog. The layers left out are kept with the reason.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/model_catalog.hpp"

namespace shapescope::self_check {

inline constexpr std::array<int, 4> kTpDegrees{1, 2, 4, 8};

// One layer that runs a shape: a catalog model's module at a TP degree, or a shape named outside the catalog.
struct ShapeUse {
  std::string model, module;
  int tp = 1;           // 0: a raw shape (--shapes), no TP degree
  bool catalog = true;  // false: a model outside the catalog (--hf-config, --shapes, the named extras)
  bool operator==(const ShapeUse&) const = default;
};

struct CheckShape {
  int64_t n = 0, k = 0;
  std::vector<ShapeUse> uses;
  bool in_catalog() const;
  bool outside_catalog() const;  // some use is from a model outside the catalog
};

// A layer of a model at a TP degree that the self-check does not sweep, and why.
struct LeftOut {
  ShapeUse use;
  int64_t n = 0, k = 0;
  std::string reason;
};

struct ShapeList {
  std::vector<CheckShape> shapes;  // sorted by (N, K), each once
  std::vector<LeftOut> left_out;
  // The shape's entry, added when new.
  CheckShape& shape(int64_t n, int64_t k);
  // Whether (N, K) is swept (for some other layer, when asked about one left out).
  bool sweeps(int64_t n, int64_t k) const;
};

// A shape of a real model outside the catalog, named with where it comes from.
struct NamedShape {
  int64_t n = 0, k = 0;
  std::string model, module;
  int tp = 1;
  std::string source;  // the config values it is derived from
};
// The three shapes the targets are also checked on (models not in models/).
const std::vector<NamedShape>& named_extra_shapes();

// Every model of `catalog` (its_catalog: whether these are catalog models or a --hf-config model) at TP 1/2/4/8.
// A layer is swept when it is in the FP8 block-scaled format (the kernels' format), not batched, and its TP
// split keeps whole 128x128 scale blocks (profile refuses the others by default).
void add_model_shapes(ShapeList& list, const ModelCatalog& catalog, bool its_catalog);
// "N,K;N,K": raw shapes outside the catalog. Throws UserError naming the text and the form.
void add_raw_shapes(ShapeList& list, const std::string& text);
void add_named_extras(ShapeList& list);

// "model/module/tpT" of every use, separated by spaces.
std::string uses_text(const CheckShape& shape);
// The shape list as CSV: n,k,catalog,uses (model/module/tpT separated by spaces); then the layers left out:
// model,module,tp,n,k,swept_for_another_layer,why.
std::string shape_list_text(const ShapeList& list);

}  // namespace shapescope::self_check
