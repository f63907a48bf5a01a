// The operands of the plugin ABI's version 2 formats (MXFP8, the W4A16 FP4 layouts, NVFP4), generated in host
// memory from the synthetic streams every kernel and the float64 reference read, in the plain layout
// shapescope_plugin.h documents. The CPU sessions hand them over as they are; the CUDA sessions copy them up.
#include <algorithm>

#include "kernels/host_threads.hpp"
#include "kernels/plugin_kernels.hpp"

namespace shapescope::kernels {

PluginHostOperand plugin_host_operand(const OperandEncoding& encoding, const synthetic::OperandStreams& streams,
                                      uint64_t seed, int64_t batch_count, int64_t rows, int64_t k) {
  const int element_bytes_x2 = element_bits(encoding.element) / 4;  // bytes per two elements
  const int64_t row_bytes = (k * element_bytes_x2 + 1) / 2;
  const int64_t k_blocks = encoding.scaled() ? synthetic::blocks(k, encoding.block_k) : 0;
  const int64_t all_rows = batch_count * rows;
  PluginHostOperand operand;
  operand.codes.assign(std::size_t(all_rows * row_bytes), 0);
  operand.scale_codes.assign(std::size_t(all_rows * k_blocks), 0);
  HostThreads::shared().run_blocks(
      std::size_t(all_rows),
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t flat_row = begin; flat_row < end; ++flat_row) {
          const int64_t batch = int64_t(flat_row) / rows, row = int64_t(flat_row) % rows;
          uint8_t* codes = operand.codes.data() + flat_row * std::size_t(row_bytes);
          for (int64_t col = 0; col < k; ++col) {
            const uint16_t code =
                synthetic::element_code(encoding, streams, seed, synthetic::b_index(batch, row, col, rows, k));
            switch (encoding.element) {
              case ElementType::e2m1: codes[col / 2] |= uint8_t((code & 0xF) << (col % 2 ? 4 : 0)); break;
              case ElementType::bf16:
                codes[2 * col] = uint8_t(code & 0xFF);
                codes[2 * col + 1] = uint8_t(code >> 8);
                break;
              default: codes[col] = uint8_t(code);
            }
          }
          for (int64_t block = 0; block < k_blocks; ++block) {
            const uint64_t index =
                synthetic::scale_index(encoding, batch, row, block * encoding.block_k, rows, k);
            operand.scale_codes[flat_row * std::size_t(k_blocks) + std::size_t(block)] =
                synthetic::scale_code(encoding, streams, seed, index);
          }
        }
      },
      64);
  if (encoding.tensor_scale) {
    for (int64_t batch = 0; batch < batch_count; ++batch)
      operand.tensor_scales.push_back(synthetic::tensor_scale_value(encoding, streams, seed, batch));
  }
  return operand;
}

}  // namespace shapescope::kernels
