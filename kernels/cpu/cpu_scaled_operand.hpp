// An operand of a block-scaled encoding (common/block_format.hpp) as the CPU kernels keep it: codes as the
// format stores them (e2m1 two per byte, the even K element in the low nibble; e4m3 one per byte) and each
// block's scale decoded to float with the per-tensor scale folded in. Dequantizing rows is the kernels' work
// inside the run, as the GPU kernels dequantize in registers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/block_format.hpp"
#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cpu {

class CpuScaledOperand {
 public:
  // The synthetic operand [batch_count][rows][k] of `encoding` (1 x block_k scales), packed on `threads` threads.
  CpuScaledOperand(const OperandEncoding& encoding, const synthetic::OperandStreams& streams, uint64_t seed,
                   int64_t batch_count, int64_t rows, int64_t k, int threads);

  // Columns [k0, k0 + depth) of row `row` of batch `batch`, dequantized into `out`.
  void dequantize(int64_t batch, int64_t row, int64_t k0, int64_t depth, float* out) const;
  std::size_t bytes() const { return packed_.size() + scales_.size() * sizeof(float); }

 private:
  OperandEncoding encoding_;
  int64_t rows_, k_, row_bytes_, k_blocks_;
  std::vector<uint8_t> packed_;  // [batch][rows][row_bytes]
  std::vector<float> scales_;    // [batch][rows][k_blocks]
};

// tile[rows x width] = A[rows x k] (float, row stride k) times rows col0 .. col0 + width of `weights`' batch
// `batch`, transposed; the weights dequantized 128 K columns at a time into a scratch block.
RowMajorMatrix scaled_weight_columns(const float* a, int64_t rows, int64_t k, const CpuScaledOperand& weights,
                                     int64_t batch, int64_t col0, int64_t width);

// Why the CPU's block-scaled kernels cannot run weights of `format` at this K, or nothing.
std::optional<std::string> scaled_k_problem(BlockFormatId format, int64_t k);

}  // namespace shapescope::kernels::cpu
