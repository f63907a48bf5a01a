// The float64 reference of a grouped GEMM, group by group: sampled elements in every
// group with rows (its first and last row and column always among them), compared with
// what the kernel wrote at the group's rows of the layout. Padding rows are never checked.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/grouped_gemm.hpp"
#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels {

struct GroupedOutputIndex {
  int64_t group = 0, row = 0, col = 0;  // row within the group
};

// About `max_elements` sampled outputs spread over the groups with rows, at least the four
// corners of each (every element of small groups).
std::vector<GroupedOutputIndex> sample_grouped_output(const GroupedShape& shape, int64_t max_elements);

// The output's layout row of a sampled element.
inline int64_t layout_row(const GroupedShape& shape, const GroupedOutputIndex& index) {
  return shape.first_row(index.group) + index.row;
}

// The synthetic operands' definition of a grouped problem (grouped_gemm.hpp): A the routed
// rows as batch 0 of [T, K], B group g as batch g of [G, N, K].
ReferenceProblem grouped_reference_problem(OperandFormat format, const GroupedShape& shape, uint64_t seed_a,
                                           uint64_t seed_b);

// Compares bf16 outputs (raw bits, one per sampled index) with the float64 reference;
// kPoisonBf16 counts as unwritten.
CheckResult compare_grouped_with_reference(OperandFormat format, const GroupedShape& shape, uint64_t seed_a,
                                           uint64_t seed_b, std::span<const GroupedOutputIndex> indices,
                                           std::span<const uint16_t> outputs_bf16);

}  // namespace shapescope::kernels
