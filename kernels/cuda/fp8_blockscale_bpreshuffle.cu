// fp8_blockscale_bpreshuffle: the same GEMM as fp8_blockscale, with B rearranged once
// at preparation time into 16 KB tiles [n tile][K block][128 rows x 128 bytes] already
// in the 128-byte swizzle the wgmma descriptors expect. The main loop then copies
// each tile as one contiguous run (no row stride, no swizzle arithmetic, no edge
// masking: rows past N are stored as zeros). The AITER study's question: what does
// that buy on NVIDIA, and where?
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/fp8_blockscale.hpp"
#include "kernels/cuda/fp8_blockscale_kernel.cuh"
#include "kernels/cuda/own_kernel_entries.hpp"

namespace shapescope::kernels::cuda {
namespace {

constexpr int64_t kTileRows = 128;
constexpr int64_t kTileBytes = kTileRows * kFp8BlockK;

// One thread per 16-byte chunk of the pre-shuffled buffer.
__global__ void preshuffle_b_kernel(const uint8_t* row_major, uint8_t* preshuffled, int64_t n, int64_t k) {
  const int64_t kblocks = (k + kFp8BlockK - 1) / kFp8BlockK;
  const int64_t chunks = (n + kTileRows - 1) / kTileRows * kblocks * (kTileBytes / 16);
  for (int64_t q = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; q < chunks; q += int64_t(gridDim.x) * blockDim.x) {
    const int64_t tile = q / (kTileBytes / 16);
    const int64_t n_tile = tile / kblocks, kblock = tile % kblocks;
    const int within = int(q % (kTileBytes / 16));
    const int row = within / 8, stored_chunk = within % 8;
    const int source_chunk = stored_chunk ^ (row & 7);  // the 128-byte swizzle, undone on the source side
    const int64_t source_row = n_tile * kTileRows + row;
    uint4 value = make_uint4(0, 0, 0, 0);
    const int64_t source_col = kblock * kFp8BlockK + source_chunk * 16;
    if (source_row < n && source_col < k)  // past N or K: zeros
      value = *reinterpret_cast<const uint4*>(row_major + source_row * k + source_col);
    *reinterpret_cast<uint4*>(preshuffled + preshuffled_tile_offset(n_tile, kblock, kblocks) + within * 16) = value;
  }
}

}  // namespace

int64_t preshuffled_b_bytes(int64_t n, int64_t k) {
  return (n + kTileRows - 1) / kTileRows * ((k + kFp8BlockK - 1) / kFp8BlockK) * kTileBytes;
}

void preshuffle_b(const uint8_t* row_major, uint8_t* preshuffled, int64_t n, int64_t k, cudaStream_t stream) {
  if (k % 16 != 0) throw std::logic_error("preshuffle_b: K must be a multiple of 16");
  preshuffle_b_kernel<<<1024, 256, 0, stream>>>(row_major, preshuffled, n, k);
  CUDA_CHECK_LAUNCH();
}

KernelEntry fp8_blockscale_bpreshuffle_entry() {
  KernelEntry entry = fp8_blockscale_entry();
  entry.name = "fp8_blockscale_bpreshuffle";
  entry.formats = "A e4m3 1x128 f32 scales, B e4m3 128x128 f32 scales (pre-shuffled 128x128 swizzled tiles), C bf16";
  entry.description =
      "ours: fp8_blockscale with B pre-shuffled into contiguous 16 KB swizzled tiles (one verbatim copy per 128 columns "
      "and K block)";
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) {
    return open_fp8_blockscale_session(device, shape, seed, WeightOrder::preshuffled);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
