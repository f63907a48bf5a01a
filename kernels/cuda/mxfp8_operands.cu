// The synthetic MXFP8 operands in the layout of mxfp8_operands.hpp.
#include "kernels/cuda/mxfp8_operands.hpp"

#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {
namespace {

__global__ void fill_mxfp8_operand_kernel(OperandEncoding encoding, synthetic::OperandStreams streams, uint64_t seed,
                                          int64_t rows, int64_t k, uint8_t* codes, uint32_t* scales) {
  const int64_t stages = (k + kMxfp8ScaleWordK - 1) / kMxfp8ScaleWordK, code_count = rows * k;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < code_count + stages * rows;
       i += int64_t(gridDim.x) * blockDim.x) {
    if (i < code_count) {
      codes[i] = uint8_t(synthetic::element_code(encoding, streams, seed, uint64_t(i)));
      continue;
    }
    const int64_t stage = (i - code_count) / rows, row = (i - code_count) % rows;
    uint32_t word = 0;
    for (int sub = 0; sub < kMxfp8ScaleWordK / kMxfp8ScaleBlock; ++sub) {
      const int64_t col = stage * kMxfp8ScaleWordK + sub * kMxfp8ScaleBlock;
      const uint32_t code = col < k ? synthetic::scale_code(encoding, streams, seed,
                                                            synthetic::scale_index(encoding, 0, row, col, rows, k))
                                    : 127;
      word |= code << (8 * sub);
    }
    scales[stage * rows + row] = word;
  }
}

}  // namespace

void fill_mxfp8_operand(const OperandEncoding& encoding, const synthetic::OperandStreams& streams, uint64_t seed,
                        int64_t rows, int64_t k, uint8_t* codes, uint32_t* scales, cudaStream_t stream) {
  const int64_t count = rows * k + mxfp8_scale_words(rows, k);
  fill_mxfp8_operand_kernel<<<unsigned(std::clamp<int64_t>((count + 255) / 256, 1, 65535)), 256, 0, stream>>>(
      encoding, streams, seed, rows, k, codes, scales);
  CUDA_CHECK_LAUNCH();
}

}  // namespace shapescope::kernels::cuda
