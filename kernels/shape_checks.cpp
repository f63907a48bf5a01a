#include "kernels/shape_checks.hpp"

#include <algorithm>
#include <climits>

#include "common/user_error.hpp"

namespace shapescope::kernels {

std::optional<std::string> batch_count_problem(const GemmShape& shape) {
  if (shape.batch_count != 1) return "batch_count=" + std::to_string(shape.batch_count) + " (not batched)";
  return std::nullopt;
}

std::optional<std::string> extent_problem(const GemmShape& shape) {
  if (shape.m < 1 || shape.n < 1 || shape.k < 1) return "M, N and K must be positive";
  return std::nullopt;
}

std::optional<std::string> int32_index_problem(std::initializer_list<int64_t> operand_elements) {
  if (std::max(operand_elements) > int64_t(INT32_MAX)) return "an operand over 2^31 elements";
  return std::nullopt;
}

void require_supported_weights(const std::string& kernel, const WeightShape& shape,
                               const std::optional<std::string>& reason) {
  if (reason)
    throw UserError(kernel + " cannot run N=" + std::to_string(shape.n) + " K=" + std::to_string(shape.k) + ": " +
                    *reason + "; pick another kernel for this shape");
}

}  // namespace shapescope::kernels
