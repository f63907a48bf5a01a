// The configuration of the algorithm cuBLASLt's heuristic picked, as the library's enums
// number it, and its name in profiles (the CSV's kernel_name): every attribute of the
// algorithm's configuration is in it, so two points with the same name ran the same kernel.
// Host code without cuBLASLt's header (the enumerator names come from the generated
// cublaslt_enum_names.inc), so CPU tests can check names against analyze's parsers.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace shapescope::kernels::cuda {

struct CublasLtEnumName {
  int value;
  const char* name;
};
#include "kernels/cuda/cublaslt_enum_names.inc"

// The enumerator's name for `value`; "auto" for 0 when the enum has no name for it (the
// library decides), "#value" for a value newer than the header the table came from.
template <std::size_t kCount>
std::string cublaslt_enum_name(const CublasLtEnumName (&names)[kCount], int value) {
  for (const auto& entry : names)
    if (entry.value == value) return entry.name;
  return value == 0 ? "auto" : fmt::format("#{}", value);
}

// "128x64" -> {128, 64}; {0, 0} when the name is not of that form.
inline std::pair<int, int> cublaslt_tile_extents(const std::string& name) {
  const auto x = name.find('x');
  if (x == std::string::npos || x == 0 || x + 1 == name.size()) return {0, 0};
  for (std::size_t i = 0; i < name.size(); ++i)
    if (i != x && (name[i] < '0' || name[i] > '9')) return {0, 0};
  return {std::stoi(name.substr(0, x)), std::stoi(name.substr(x + 1))};
}

struct CublasLtAlgorithmInfo {
  // CUBLASLT_ALGO_CONFIG_*: ID, TILE_ID, STAGES_ID, SPLITK_NUM, REDUCTION_SCHEME,
  // CTA_SWIZZLING, CUSTOM_OPTION, INNER_SHAPE_ID, CLUSTER_SHAPE_ID.
  int id = -1, tile = 0, stages = 0, split_k = 1;
  int reduction_scheme = 0, cta_swizzling = 0, custom_option = 0, inner_shape = 0, cluster_shape = 0;
  int tile_rows = 0, tile_cols = 0;  // cuBLASLt's tile: rows of D (our N) x columns of D (our M)
  std::size_t workspace_bytes = 0;

  // "cublasLt algo=66 tile=128x128 stages=128x6 splitK=1 reduction=NONE swizzle=0 custom=0
  // inner=auto cluster=1x2x1". The tile comes first: analyze reads the first MxN token as
  // the tile (the cluster shape has three extents and stages' second extent is below 16).
  std::string describe() const {
    return fmt::format(
        "cublasLt algo={} tile={} stages={} splitK={} reduction={} swizzle={} custom={} inner={} cluster={}", id,
        cublaslt_enum_name(kCublasLtTileNames, tile), cublaslt_enum_name(kCublasLtStagesNames, stages), split_k,
        cublaslt_enum_name(kCublasLtReductionSchemeNames, reduction_scheme), cta_swizzling, custom_option,
        cublaslt_enum_name(kCublasLtInnerShapeNames, inner_shape),
        cublaslt_enum_name(kCublasLtClusterShapeNames, cluster_shape));
  }
  // Sets tile_rows and tile_cols from the tile id.
  void set_tile_extents() {
    const auto [rows, cols] = cublaslt_tile_extents(cublaslt_enum_name(kCublasLtTileNames, tile));
    tile_rows = rows;
    tile_cols = cols;
  }
};

}  // namespace shapescope::kernels::cuda
