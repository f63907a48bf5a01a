#include "kernels/cuda/block_scaled_operands.cuh"

#include "kernels/cuda/cublaslt_scale_layout.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/grid_stride_launch.cuh"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

// One thread per byte of codes: one e4m3 code, or two e2m1 codes (K 2j in the low nibble, 2j+1 in the high one).
__global__ void fill_codes_kernel(OperandEncoding encoding, synthetic::OperandStreams streams, uint64_t seed,
                                  int64_t rows, int64_t k, uint8_t* codes) {
  const int per_byte = encoding.element == ElementType::e2m1 ? 2 : 1;
  const int64_t row_bytes = k / per_byte, count = rows * row_bytes;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / row_bytes, col = i % row_bytes * per_byte;
    uint8_t byte = 0;
    for (int j = 0; j < per_byte; ++j)
      byte |= uint8_t((synthetic::element_code(encoding, streams, seed, synthetic::b_index(0, row, col + j, rows, k)) &
                       (per_byte == 2 ? 0xF : 0xFF))
                      << (4 * j));
    codes[i] = byte;
  }
}

// One thread per logical (row, K block) scale, written to its place in the tiled layout.
__global__ void fill_scales_kernel(OperandEncoding encoding, synthetic::OperandStreams streams, uint64_t seed,
                                   int64_t rows, int64_t k, uint8_t* scales) {
  const int64_t kblocks = synthetic::blocks(k, encoding.block_k), count = rows * kblocks;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / kblocks, kblock = i % kblocks;
    scales[cublaslt_vec_scale_offset(row, kblock, kblocks)] = synthetic::scale_code(
        encoding, streams, seed, synthetic::scale_index(encoding, 0, row, kblock * encoding.block_k, rows, k));
  }
}

}  // namespace

void fill_block_scaled_operand(const OperandEncoding& encoding, bool streams_of_a, uint64_t seed, int64_t rows,
                               int64_t k, uint8_t* codes, uint8_t* scales, cudaStream_t stream) {
  const synthetic::OperandStreams streams = streams_of_a ? synthetic::kAStreams : synthetic::kBStreams;
  const int64_t kblocks = synthetic::blocks(k, encoding.block_k);
  CUDA_CHECK(cudaMemsetAsync(scales, 0, std::size_t(cublaslt_vec_scale_bytes(rows, kblocks)), stream));
  launch_grid_stride(fill_codes_kernel, rows * k, stream, encoding, streams, seed, rows, k, codes);
  launch_grid_stride(fill_scales_kernel, rows * kblocks, stream, encoding, streams, seed, rows, k, scales);
}

}  // namespace shapescope::kernels::cuda
