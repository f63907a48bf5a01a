// The CPU's block-scaled FP8 product for one 128-column block of the output, shared by
// cpu_fp8_blockscale and cpu_fp8_blockscale_grouped: per 128-wide K block an sgemm of the
// decoded codes, promoted into the fp32 accumulator with sa[row, kb] * sb[kb].
#pragma once

#include <cstdint>

#include "kernels/cpu/cpu_gemm.hpp"

namespace shapescope::kernels::cpu {

struct Fp8ColumnsProblem {
  const float* a = nullptr;         // decoded A codes [rows][k], row stride k
  const float* a_scales = nullptr;  // [rows][ceil(k/128)]
  const float* b = nullptr;         // decoded B codes of the block's first column [width][k], row stride k
  const float* b_scales = nullptr;  // the block's scales [ceil(k/128)]
  int64_t rows = 0, width = 0, k = 0;
};

// Returns the rows x width fp32 result.
RowMajorMatrix fp8_blockscale_columns(const Fp8ColumnsProblem& problem);

}  // namespace shapescope::kernels::cpu
