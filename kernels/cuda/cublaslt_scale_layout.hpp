// Where cuBLASLt expects the float scales of a block-scaled FP8 GEMM (Hopper,
// CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F and _BLK128x128_32F). cuBLASLt takes
// no leading dimension for scales: the layout is implied, so it must be exact.
//
// The rule (cuBLAS docs, "scaling factors layouts"; the same rule PyTorch adopted
// in pytorch/pytorch#166752 after silent wrong answers whenever ceil(K/128) % 4 != 0):
// for an operand with `outer` rows (M or N) and K columns, L = ceil(K/128),
//   VEC128_32F   (1x128):   [L][outer], outer-major: scale(row, kgroup) at kgroup * outer + row
//   BLK128x128_32F:         [ceil(outer/128)][round_up(L, 4)], K-blocks contiguous:
//                           scale(block, kblock) at block * round_up(L, 4) + kblock
// So a 128x128 scale row is padded to a multiple of 4 floats (16 bytes): K=2304
// gives 18 K-blocks stored 20 apart. Reading them 18 apart shifts every block row
// after the first onto its neighbour's scales.
// Header-only, no CUDA: the CPU tests check it.
#pragma once

#include <cstdint>

namespace shapescope::kernels::cuda {

struct ScaleTensorLayout {
  int64_t outer_stride = 0;   // floats between consecutive rows (VEC128) or row blocks (BLK128x128)
  int64_t kgroup_stride = 0;  // floats between consecutive K groups
  int64_t floats = 0;         // allocation, padding included
  int64_t offset(int64_t outer_index, int64_t kgroup) const {
    return outer_index * outer_stride + kgroup * kgroup_stride;
  }
};

constexpr int64_t kScaleGroup = 128;

constexpr int64_t ceil_div(int64_t value, int64_t divisor) { return (value + divisor - 1) / divisor; }
constexpr int64_t round_up(int64_t value, int64_t multiple) { return ceil_div(value, multiple) * multiple; }

// 1x128 scales of an operand with `rows` rows (the activations: rows = M).
constexpr ScaleTensorLayout cublaslt_vec128_scale_layout(int64_t rows, int64_t k) {
  const int64_t kgroups = ceil_div(k, kScaleGroup);
  return ScaleTensorLayout{1, rows, rows * kgroups};
}

// 128x128 scales of an operand with `rows` rows (the weights: rows = N).
// `pad_kblocks` false gives the unpadded layout that produces garbage: only the
// device test that proves the rule uses it.
constexpr ScaleTensorLayout cublaslt_blk128x128_scale_layout(int64_t rows, int64_t k, bool pad_kblocks = true) {
  const int64_t kblocks = ceil_div(k, kScaleGroup);
  const int64_t row_stride = pad_kblocks ? round_up(kblocks, 4) : kblocks;
  return ScaleTensorLayout{row_stride, 1, ceil_div(rows, kScaleGroup) * row_stride};
}

// One-byte block scales of Blackwell's block-scaled GEMMs (CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3 and
// _VEC32_UE8M0; cuBLAS docs, "1D block scaling factors layout"): one byte per (row, K block) of an operand with
// `rows` rows (M or N) and `kblocks` K blocks, in tiles of 128 rows x 4 K blocks (512 bytes), the tiles of a row
// block K-block after K-block; inside a tile row r, K block c sits at (r % 32) * 16 + (r / 32) * 4 + c. The
// allocation pads rows to 128 and K blocks to 4.
constexpr int64_t cublaslt_vec_scale_offset(int64_t row, int64_t kblock, int64_t kblocks) {
  const int64_t tile = (row / 128) * ceil_div(kblocks, 4) + kblock / 4;
  return tile * 512 + (row % 32) * 16 + (row % 128 / 32) * 4 + kblock % 4;
}
constexpr int64_t cublaslt_vec_scale_bytes(int64_t rows, int64_t kblocks) {
  return round_up(rows, 128) * round_up(kblocks, 4);
}

}  // namespace shapescope::kernels::cuda
