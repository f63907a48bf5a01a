// The physical layout of FP4 (e2m1) weights and their block scales as our W4A16 kernels read them, shared by
// the packer (a16w4_weights.cu, in a session's untimed prepare) and the kernels (a16w4_blockscale_kernel.cuh).
//
// Weights stream once, so the layout is made for 16-byte copies that each lane reads back whole (through its
// own slots of a shared-memory ring, a16w4_blockscale_kernel.cuh), with no rearranging: a warp owns 32 columns of N (four mma.sync n8 tiles) and walks K in chunks of 128. For one (n8 tile, chunk)
// the 32 lanes load 16 contiguous bytes each (512 bytes a warp), which are exactly the B fragments of the lane
// for all 8 mma k-steps of the chunk. A mma sums over K, so any permutation of K that A and B share gives the
// same product: lane (group g, quad q) holds row g of the tile at K = chunk*128 + s*32 + 8q + j (sub-chunk s =
// 0..3, j = 0..7) in 32-bit word s of its 16 bytes, and reads the activations of the same 8 K as one 16-byte
// row-major load. Within a word the nibbles sit where the dequantization wants them (kNibbleShift): j = 0 and
// 1 at the top of the two 16-bit halves, so one mask and one shift make a bf16 pair (Marlin's FP4 trick).
//
// Scales: one byte per lane per sub-chunk (a 32-block, or the 16-block of its quad half), four sub-chunks in
// one 32-bit word, eight rows of a tile side by side (32 or 64 contiguous bytes, one load per quad).
#pragma once

#include <cstdint>

#include "kernels/host_device.hpp"

namespace shapescope::kernels::cuda {

constexpr int kA16w4ChunkK = 128;   // K per lane load
constexpr int kA16w4TilesPerWarp = 4;  // mma n8 tiles a warp owns
constexpr int kA16w4WarpN = 8 * kA16w4TilesPerWarp;
constexpr int kA16w4WordsPerTileChunk = 32 * 4;  // 32 lanes x 16 bytes

// Bit position of nibble j (K = 8q + j of the lane's 8) in its 32-bit word.
SHAPESCOPE_HD constexpr int a16w4_nibble_shift(int j) { return (j % 2) * 16 + 12 - 4 * (j / 2); }

// How the weights of one batch (expert) of N x K are laid out.
struct A16w4Layout {
  int64_t warp_tiles = 0;   // ceil(N / 32)
  int64_t chunks = 0;       // ceil(K / 128)
  int scale_words_per_row = 1;  // 1 for 32-element scale blocks, 2 for 16-element ones

  SHAPESCOPE_HD static A16w4Layout of(int64_t n, int64_t k, int block_k) {
    return A16w4Layout{(n + kA16w4WarpN - 1) / kA16w4WarpN, (k + kA16w4ChunkK - 1) / kA16w4ChunkK,
                       block_k == 16 ? 2 : 1};
  }
  // 32-bit words of weights and of scales per batch.
  SHAPESCOPE_HD int64_t weight_words() const { return warp_tiles * chunks * kA16w4TilesPerWarp * kA16w4WordsPerTileChunk; }
  SHAPESCOPE_HD int64_t scale_words() const { return warp_tiles * chunks * kA16w4TilesPerWarp * 8 * scale_words_per_row; }
  // First word of (warp tile, chunk, n8 tile): weights, then scales.
  SHAPESCOPE_HD int64_t weight_word(int64_t warp_tile, int64_t chunk, int tile) const {
    return ((warp_tile * chunks + chunk) * kA16w4TilesPerWarp + tile) * kA16w4WordsPerTileChunk;
  }
  SHAPESCOPE_HD int64_t scale_word(int64_t warp_tile, int64_t chunk, int tile) const {
    return ((warp_tile * chunks + chunk) * kA16w4TilesPerWarp + tile) * 8 * scale_words_per_row;
  }
};

// The scale codes are folded into bf16 multipliers of the dequantized nibbles (which come out as value x 2^-126,
// bf16 subnormals for the smallest): multiplier = scale x 2^(126 - offset), and the offset comes back as
// 2^offset on the fp32 output. The offsets keep every multiplier and product a normal bf16: ue4m3 scales fit
// for every code; e8m0 codes must lie in [kE8m0LowestCode, kE8m0HighestCode] (scales 2^-62 .. 2^64).
constexpr int kUe4m3ScaleOffset = 9;
constexpr int kE8m0ScaleOffset = 63;
constexpr int kE8m0LowestCode = 65, kE8m0HighestCode = 191;
constexpr uint8_t kE8m0UnitCode = 127, kUe4m3UnitCode = 0x38;  // 1.0: the scale of padding

}  // namespace shapescope::kernels::cuda
