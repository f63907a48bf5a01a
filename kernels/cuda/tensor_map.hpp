// Tensor maps for the bulk copy engine: a row-major matrix cut into boxes of
// `box_rows` rows by 128 bytes, laid out in shared memory in the 128-byte swizzle
// (what wgmma reads, and a bank-conflict-free staging layout for stores). Host side;
// the driver entry point is looked up at run time.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace shapescope::kernels::cuda {

// rows x cols elements of element_bytes (1: e4m3 codes, 2: bf16), row stride cols
// (cols * element_bytes a multiple of 16); boxes of box_rows (<= 256) x 128 bytes;
// loads past an edge deliver zeros, stores past an edge write nothing.
CUtensorMap swizzled_tile_map(const void* base, int element_bytes, int64_t rows, int64_t cols, int box_rows);

// rows x 128 bytes already in the order and swizzle shared memory wants (pre-shuffled
// weights): boxes of box_rows rows copied verbatim.
CUtensorMap verbatim_rows_map(const void* base, int64_t rows, int box_rows);

// fp32 activation scales stored M-major, [K block][rows_padded] (rows_padded a multiple
// of 4): boxes of box_rows (<= 256) consecutive rows of one K block.
CUtensorMap scale_column_map(const float* base, int64_t rows_padded, int64_t kblocks, int box_rows);

}  // namespace shapescope::kernels::cuda
