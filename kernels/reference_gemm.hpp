// The float64 reference every kernel is checked against: the exact product of the
// dequantized synthetic operands, on a deterministic sample of output elements.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/kernel.hpp"
#include "kernels/operand_format.hpp"

namespace shapescope::kernels {

struct ReferenceProblem {
  OperandFormat format;
  GemmShape shape;
  uint64_t seed_a = 0;  // activations (fresh per M)
  uint64_t seed_b = 0;  // weights (fresh per session)
};

struct OutputIndex {
  int64_t batch, row, col;
};

// Every element when the output has at most `max_elements`, else a deterministic
// spread that always includes the first and last rows and columns of each batch.
std::vector<OutputIndex> sample_output(const GemmShape& shape, int64_t max_elements);

// Dequantized operand values (float64) at a logical index.
double a_value(const ReferenceProblem& problem, int64_t batch, int64_t row, int64_t col);
double b_value(const ReferenceProblem& problem, int64_t batch, int64_t row, int64_t col);

// One dequantized operand row [k] of A (is_a) or B at (batch, row), decoding each code once
// and each block scale once per block.
std::vector<double> dequantized_row(const ReferenceProblem& problem, bool is_a, int64_t batch, int64_t row);

// C[batch][row][col] = sum_k A[batch][row][k] * B[batch][col][k], in float64.
double reference_element(const ReferenceProblem& problem, const OutputIndex& index);

// The check's one metric: ||out - ref|| / ||ref|| from the two sums of squares; 0 when both are 0, infinite when
// only the reference is.
double relative_error(double diff_squares, double ref_squares);

// Compares bf16 outputs (raw bits, one per sampled index) with the reference.
// Elements still equal to kPoisonBf16 count as unwritten.
constexpr uint16_t kPoisonBf16 = 0xFFFF;  // a NaN no kernel writes for finite inputs
CheckResult compare_with_reference(const ReferenceProblem& problem, std::span<const OutputIndex> indices,
                                   std::span<const uint16_t> outputs_bf16);

}  // namespace shapescope::kernels
