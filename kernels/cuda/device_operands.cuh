// Fills device buffers in place with the synthetic operands of
// kernels/synthetic_operands.hpp, in the physical layout a kernel wants, and
// reads sampled outputs back for the float64 reference check.
//
// Codes and bf16 values are row-major [batch][rows][k] (rows = m for A, n for B).
// Scales go wherever `ScaleStrides` says, so one filler serves every library's
// convention (cuBLASLt/DeepGEMM MN-major activation scales, padded K-block rows...).
// Elements a layout pads are never written: callers clear their buffers first.
// Host-callable declarations only, so .cpp files may include this too.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/host_device.hpp"
#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels::cuda {

// Where scale (batch, outer, kgroup) lives, in floats from the buffer start.
// outer is the row m for 1x128 activation scales, the n block for 128x128 weight scales.
struct ScaleStrides {
  int64_t batch = 0;
  int64_t outer = 0;
  int64_t kgroup = 0;
  SHAPESCOPE_HD int64_t offset(int64_t b, int64_t outer_index, int64_t kgroup_index) const {
    return b * batch + outer_index * outer + kgroup_index * kgroup;
  }
};

// Where output element (batch, row, col) lives, in elements.
struct OutputStrides {
  int64_t batch = 0;
  int64_t row = 0;
  int64_t col = 1;
};

// e4m3 codes of stream a_codes or b_codes, row-major [batch][rows][k].
void fill_fp8_codes(uint8_t* codes, uint64_t seed, uint64_t stream_id, int64_t batch, int64_t rows, int64_t k,
                    cudaStream_t stream);
// bf16 values of stream a_bf16 or b_bf16, row-major [batch][rows][k].
void fill_bf16_values(uint16_t* values, uint64_t seed, uint64_t stream_id, int64_t batch, int64_t rows, int64_t k,
                      cudaStream_t stream);
// 1x128 activation scales: one per (batch, row of m, K group).
void fill_a_scales(float* scales, uint64_t seed, int64_t batch, int64_t m, int64_t k, const ScaleStrides& layout,
                   cudaStream_t stream);
// 128x128 weight scales: one per (batch, block of 128 rows of n, K block).
void fill_b_scales(float* scales, uint64_t seed, int64_t batch, int64_t n, int64_t k, const ScaleStrides& layout,
                   cudaStream_t stream);

// Sets `count` bf16 elements to kPoisonBf16, so unwritten outputs are detectable.
void poison_bf16(uint16_t* output, int64_t count, cudaStream_t stream);

// Copies the sampled output elements to the host (synchronizes `stream`).
std::vector<uint16_t> gather_bf16(const uint16_t* output, const OutputStrides& layout,
                                  std::span<const OutputIndex> indices, cudaStream_t stream);

}  // namespace shapescope::kernels::cuda
