// Which shapes the portable FP8 block-scale kernel runs (host code, shared by the CUDA and
// HIP entries that register it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/kernel.hpp"

namespace shapescope::kernels::portable {

inline std::optional<std::string> portable_fp8_blockscale_unsupported_reason(const GemmShape& shape) {
  if (shape.batch_count != 1) return "batch_count=" + std::to_string(shape.batch_count) + " (not batched)";
  if (shape.m < 1 || shape.n < 1 || shape.k < 1) return "M, N and K must be positive";
  if (shape.m > 65535 * 64) return "M over 65535 tiles of 64 rows (one grid y per tile)";
  if (shape.m * shape.n > int64_t(INT32_MAX) || shape.n * shape.k > int64_t(INT32_MAX) ||
      shape.m * shape.k > int64_t(INT32_MAX))
    return "an operand over 2^31 elements";
  return std::nullopt;
}

}  // namespace shapescope::kernels::portable
