// The configuration of the algorithm cuBLASLt's heuristic picked, as the library's enums
// number it, and its name in profiles (the CSV's kernel_name): every attribute of the
// algorithm's configuration is in it, so two points with the same name ran the same kernel.
// Host code without cuBLASLt's header (the enumerator names come from the generated
// cublaslt_enum_names.inc), so CPU tests can check names against analyze's parsers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/kernel.hpp"

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

// "128x64" -> {128, 64}, "1x2x1" -> {1, 2, 1}; empty when the name is not digits joined by 'x'.
inline std::vector<int> cublaslt_extents(const std::string& name) {
  std::vector<int> extents;
  for (std::size_t begin = 0; begin <= name.size();) {
    const std::size_t end = std::min(name.find('x', begin), name.size());
    if (end == begin || end - begin > 6) return {};
    for (std::size_t i = begin; i < end; ++i)
      if (name[i] < '0' || name[i] > '9') return {};
    extents.push_back(std::stoi(name.substr(begin, end - begin)));
    begin = end + 1;
  }
  return extents;
}

// "128x64" -> {128, 64}; {0, 0} when the name is not of that form.
inline std::pair<int, int> cublaslt_tile_extents(const std::string& name) {
  const std::vector<int> extents = cublaslt_extents(name);
  return extents.size() == 2 ? std::pair{extents[0], extents[1]} : std::pair{0, 0};
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
  // In our row-major terms: cuBLASLt's tile and cluster are rows of D (our N) by columns of D (our M), so
  // both are read transposed. All 0 when the tile is unknown; the cluster 0 when the library decides it.
  KernelConfig config() const {
    if (tile_rows == 0) return {};
    KernelConfig config{tile_cols, tile_rows, 0, 0, 0, split_k};
    if (const std::vector<int> cluster = cublaslt_extents(cublaslt_enum_name(kCublasLtClusterShapeNames, cluster_shape));
        cluster.size() == 3) {
      config.cluster_m = cluster[1];
      config.cluster_n = cluster[0];
      config.cluster_k = cluster[2];
    }
    return config;
  }
  // Sets tile_rows and tile_cols from the tile id.
  void set_tile_extents() {
    const auto [rows, cols] = cublaslt_tile_extents(cublaslt_enum_name(kCublasLtTileNames, tile));
    tile_rows = rows;
    tile_cols = cols;
  }
};

}  // namespace shapescope::kernels::cuda
