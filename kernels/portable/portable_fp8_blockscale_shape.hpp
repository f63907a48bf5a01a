// Which shapes the portable FP8 block-scale kernel runs (host code, shared by the CUDA and
// HIP entries that register it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/kernel.hpp"
#include "kernels/shape_checks.hpp"

namespace shapescope::kernels::portable {

inline std::optional<std::string> portable_fp8_blockscale_unsupported_reason(const GemmShape& shape) {
  if (auto reason = batch_count_problem(shape)) return reason;
  if (auto reason = extent_problem(shape)) return reason;
  if (shape.m > 65535 * 64) return "M over 65535 tiles of 64 rows (one grid y per tile)";
  return int32_index_problem({shape.m * shape.n, shape.n * shape.k, shape.m * shape.k});
}

}  // namespace shapescope::kernels::portable
