#include "kernels/cuda/tensor_map.hpp"

#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 function = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || entry == nullptr)
      throw std::runtime_error("cuTensorMapEncodeTiled is not in this driver; the TMA kernels need a CUDA 12+ driver");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);
  }();
  return function;
}

CUtensorMap encode(const void* base, CUtensorMapDataType type, int element_bytes, int64_t rows, int64_t cols,
                   int box_cols, int box_rows, CUtensorMapSwizzle swizzle) {
  const int64_t row_bytes = cols * element_bytes;
  if (row_bytes % 16 != 0 || box_rows < 1 || box_rows > 256 || box_cols < 1 || box_cols > 256)
    throw std::logic_error("tensor map: rows must be a multiple of 16 bytes and boxes 1..256 on each side");
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(row_bytes)};
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result = encode_tiled()(&map, type, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                                         CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                         CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(result)) + ") for " +
                             std::to_string(rows) + " x " + std::to_string(row_bytes) + " bytes, box " +
                             std::to_string(box_rows) + " x 128");
  return map;
}

}  // namespace

CUtensorMap swizzled_tile_map(const void* base, int element_bytes, int64_t rows, int64_t cols, int box_rows) {
  if (element_bytes != 1 && element_bytes != 2) throw std::logic_error("swizzled_tile_map: 1- or 2-byte elements");
  return encode(base, element_bytes == 1 ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                element_bytes, rows, cols, 128 / element_bytes, box_rows, CU_TENSOR_MAP_SWIZZLE_128B);
}

CUtensorMap verbatim_rows_map(const void* base, int64_t rows, int box_rows) {
  return encode(base, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, rows, 128, 128, box_rows, CU_TENSOR_MAP_SWIZZLE_NONE);
}

CUtensorMap scale_column_map(const float* base, int64_t rows_padded, int64_t kblocks, int box_rows) {
  // The tensor's rows are K blocks, its columns the M rows: one box is box_rows columns of one row.
  return encode(base, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, kblocks, rows_padded, box_rows, 1,
                CU_TENSOR_MAP_SWIZZLE_NONE);
}

}  // namespace shapescope::kernels::cuda
