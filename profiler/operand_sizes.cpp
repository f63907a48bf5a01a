#include "profiler/operand_sizes.hpp"

#include <optional>

#include <fmt/format.h>

#include "common/shape_axes.hpp"
#include "common/user_error.hpp"

namespace shapescope::profiler {

namespace {

// rows × columns × batch, or nullopt past kMaxOperandElements (overflow included).
std::optional<int64_t> elements(int64_t rows, int64_t columns, int64_t batch) {
  int64_t product = 0;
  if (__builtin_mul_overflow(rows, columns, &product) || __builtin_mul_overflow(product, batch, &product)) {
    return std::nullopt;
  }
  if (product > kMaxOperandElements) return std::nullopt;
  return product;
}

std::string layer_name(const GemmProblem& problem) {
  if (is_raw_shape(problem)) return fmt::format("--shape {},{},{}", problem.n, problem.k, problem.batch_count);
  return fmt::format("{} {} at TP{}", problem.model, problem.module, problem.tp);
}

std::string sizes_fix(const GemmProblem& problem) {
  return is_raw_shape(problem) ? "give a smaller shape" : "check the model's sizes";
}

}  // namespace

void check_operand_sizes(const std::vector<GemmProblem>& problems, int64_t largest_m, std::size_t device_memory_bytes) {
  for (const GemmProblem& problem : problems) {
    const std::optional<int64_t> weights = elements(problem.n, problem.k, problem.batch_count);
    if (!weights) {
      throw UserError(fmt::format("{}: weights N={} x K={} x batch {} exceed {} elements; {}", layer_name(problem),
                                  problem.n, problem.k, problem.batch_count, kMaxOperandElements, sizes_fix(problem)));
    }
    if (device_memory_bytes > 0 && uint64_t(*weights) > device_memory_bytes) {
      throw UserError(fmt::format(
          "{}: weights N={} x K={} x batch {} need at least {:.1f} GiB, more than the device's {:.1f} GiB; {}",
          layer_name(problem), problem.n, problem.k, problem.batch_count, double(*weights) / double(1ull << 30),
          double(device_memory_bytes) / double(1ull << 30),
          is_raw_shape(problem) ? sizes_fix(problem) : sizes_fix(problem) + " or use a larger --tp"));
    }
    for (const auto& [name, columns] : {std::pair{"A (M x K)", problem.k}, std::pair{"C (M x N)", problem.n}}) {
      if (!elements(largest_m, columns, problem.batch_count)) {
        throw UserError(fmt::format("{}: M={} makes {} exceed {} elements; give smaller M values",
                                    layer_name(problem), largest_m, name, kMaxOperandElements));
      }
    }
  }
}

}  // namespace shapescope::profiler
