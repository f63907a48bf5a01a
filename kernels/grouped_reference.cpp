#include "kernels/grouped_reference.hpp"

#include <algorithm>
#include <map>

#include "kernels/fp8_e4m3.hpp"

namespace shapescope::kernels {

std::vector<GroupedOutputIndex> sample_grouped_output(const GroupedShape& shape, int64_t max_elements) {
  std::vector<GroupedOutputIndex> indices;
  const int64_t active = shape.active_groups();
  if (active == 0) return indices;
  constexpr int64_t kCorners = 4;
  const int64_t per_group = std::max(kCorners, max_elements / active);
  for (int64_t g = 0; g < shape.groups(); ++g) {
    const int64_t rows = shape.rows[std::size_t(g)];
    if (rows == 0) continue;
    for (const OutputIndex& index : sample_output(GemmShape{rows, shape.n, shape.k, 1}, per_group))
      indices.push_back({g, index.row, index.col});
  }
  return indices;
}

ReferenceProblem grouped_reference_problem(OperandFormat format, const GroupedShape& shape, uint64_t seed_a,
                                           uint64_t seed_b) {
  return ReferenceProblem{format, GemmShape{shape.useful_rows(), shape.n, shape.k, shape.groups()}, seed_a, seed_b};
}

CheckResult compare_grouped_with_reference(OperandFormat format, const GroupedShape& shape, uint64_t seed_a,
                                           uint64_t seed_b, std::span<const GroupedOutputIndex> indices,
                                           std::span<const uint16_t> outputs_bf16) {
  const ReferenceProblem problem = grouped_reference_problem(format, shape, seed_a, seed_b);
  // Sampled elements share rows and columns: dequantize each operand row once.
  std::map<int64_t, std::vector<double>> a_rows;                  // by routed row
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> b_rows;  // by (group, column)
  std::vector<int64_t> routed_start(std::size_t(shape.groups()));
  for (int64_t g = 0; g < shape.groups(); ++g) routed_start[std::size_t(g)] = shape.routed_row(g);

  CheckResult result;
  double diff_squares = 0, ref_squares = 0;
  const std::size_t count = std::min(indices.size(), outputs_bf16.size());
  for (std::size_t i = 0; i < count; ++i) {
    const GroupedOutputIndex& index = indices[i];
    ++result.elements_checked;
    if (outputs_bf16[i] == kPoisonBf16) {
      ++result.unwritten;
      continue;
    }
    const int64_t routed = routed_start[std::size_t(index.group)] + index.row;
    auto [a_it, a_new] = a_rows.try_emplace(routed);
    if (a_new) a_it->second = dequantized_row(problem, true, 0, routed);
    auto [b_it, b_new] = b_rows.try_emplace({index.group, index.col});
    if (b_new) b_it->second = dequantized_row(problem, false, index.group, index.col);
    double reference = 0;
    for (int64_t kk = 0; kk < shape.k; ++kk) reference += a_it->second[std::size_t(kk)] * b_it->second[std::size_t(kk)];
    const double diff = double(decode_bf16(outputs_bf16[i])) - reference;
    diff_squares += diff * diff;
    ref_squares += reference * reference;
  }
  result.rel_err = relative_error(diff_squares, ref_squares);
  return result;
}

}  // namespace shapescope::kernels
