// The shape checks kernels' unsupported_reason share, each the one-line reason a shape fails it or nothing, and
// the check a session makes of its weights before any work.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "kernels/kernel.hpp"

namespace shapescope::kernels {

// "batch_count=4 (not batched)": a kernel that runs one batch.
std::optional<std::string> batch_count_problem(const GemmShape& shape);
// "M, N and K must be positive".
std::optional<std::string> extent_problem(const GemmShape& shape);
// "an operand over 2^31 elements" when an operand's element count passes INT32_MAX (kernels index with int).
std::optional<std::string> int32_index_problem(std::initializer_list<int64_t> operand_elements);

// Throws UserError naming `kernel`, the weights' N and K, `reason` and the fix when `reason` (the kernel's
// unsupported_reason at M = 1) is set.
void require_supported_weights(const std::string& kernel, const WeightShape& shape,
                               const std::optional<std::string>& reason);

}  // namespace shapescope::kernels
