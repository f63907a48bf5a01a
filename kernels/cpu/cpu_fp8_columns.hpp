// The CPU's block-scaled FP8 product for one 128-column block of the output, shared by
// cpu_fp8_blockscale and cpu_fp8_blockscale_grouped: per 128-wide K block an sgemm of the
// decoded codes, promoted into the fp32 accumulator with sa[row, kb] * sb[kb].
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

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

// The codes of the synthetic B, `batches` matrices [n][k], decoded to float (unscaled).
std::vector<float> decoded_fp8_weights(uint64_t seed, int64_t batches, int64_t n, int64_t k, int threads);
// Their 128x128 block scales [batch][ceil(n/128)][ceil(k/128)].
std::vector<float> fp8_weight_scales(uint64_t seed, int64_t batches, int64_t n, int64_t k);

// The weights of a session as both kernels keep them, decoded once at preparation: batch_count matrices of a
// dense WeightShape, one per group of a GroupedWeightShape.
template <typename Shape>
struct DecodedFp8Weights {
  DecodedFp8Weights(const Shape& shape, uint64_t seed, int threads)
      : shape(shape),
        seed(seed),
        decoded(decoded_fp8_weights(seed, matrices(), shape.n, shape.k, threads)),
        scales(fp8_weight_scales(seed, matrices(), shape.n, shape.k)) {}
  // Weight matrices: batches or groups (`shape` is initialized first, so the initializers may ask).
  int64_t matrices() const {
    if constexpr (std::is_same_v<Shape, WeightShape>) {
      return shape.batch_count;
    } else {
      return shape.groups;
    }
  }

  Shape shape;
  uint64_t seed = 0;
  std::vector<float> decoded;  // [batch][n][k]
  std::vector<float> scales;   // [batch][ceil(n/128)][ceil(k/128)]
};

}  // namespace shapescope::kernels::cpu
