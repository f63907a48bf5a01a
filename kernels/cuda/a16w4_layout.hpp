// The physical layout of FP4 (e2m1) weights and their block scales as our W4A16 kernels read them, shared by
// the packer (a16w4_weights.cu, in a session's untimed prepare) and the kernels (a16w4_blockscale_kernel.cuh).
//
// Weights stream once, so the layout is made for 16-byte copies that each lane reads back whole (through its
// own slots of a shared-memory ring, a16w4_blockscale_kernel.cuh), with no rearranging: a warp owns 32 columns of N (four mma.sync n8 tiles) and walks K in chunks of 128. For one (n8 tile, chunk)
// the 32 lanes load 16 contiguous bytes each (512 bytes a warp), which are exactly the B fragments of the lane
// for all 8 mma k-steps of the chunk. A mma sums over K, so any permutation of K that A and B share gives the
// same product: lane (group g, quad q) holds row g of the tile at K = chunk*128 + s*32 + 8q + j (sub-chunk s =
// 0..3, j = 0..7) in 32-bit word s of its 16 bytes, and reads the activations of the same 8 K as one 16-byte
// row-major load. Element j of a word sits in the 16-bit half j % 2, its sign bit and its three magnitude bits
// (exponent and mantissa) apart, where the dequantization wants them (a16w4_e2m1_pair): a bf16 pair is the
// word, shifted so that the sign lands on bit 15 and the magnitude on bits 8..6 of each half, masked (value x
// 2^-126; e2m1 0.5 becomes a bf16 subnormal). Pair 0 needs only the mask, pair 1 one shift (sign and
// magnitude shifted alike), pairs 2 and 3 two: 11 integer operations a word, where nibbles in place (one
// shift a pair, then mask, shift and merge sign and magnitude) took 15.
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

// Where element j (K = 8q + j of the lane's 8) keeps its sign bit, and the lowest of its three magnitude bits,
// in its 32-bit word: the four pairs tile each 16-bit half, and each pair's shifts to bit 15 and bits 8..6 move
// no other bit of the pattern 0x81C081C0 across the halves.
SHAPESCOPE_HD constexpr int a16w4_sign_bit(int j) {
  constexpr int kSignBits[4] = {15, 12, 13, 14};
  return kSignBits[j / 2] + 16 * (j % 2);
}
SHAPESCOPE_HD constexpr int a16w4_magnitude_bit(int j) {
  constexpr int kMagnitudeBits[4] = {6, 3, 9, 0};
  return kMagnitudeBits[j / 2] + 16 * (j % 2);
}

// e2m1 `code` (sign bit 3, magnitude bits 2..0) placed as element j of a word.
SHAPESCOPE_HD constexpr uint32_t a16w4_place_e2m1(uint32_t code, int j) {
  return ((code >> 3 & 1u) << a16w4_sign_bit(j)) | ((code & 7u) << a16w4_magnitude_bit(j));
}

template <int kShift>
SHAPESCOPE_HD constexpr uint32_t a16w4_shift_left(uint32_t word) {
  if constexpr (kShift >= 0) return word << kShift;
  else return word >> -kShift;
}

// Elements 2 kPair (low half) and 2 kPair + 1 (high half) of `word` as a bf16 pair of value x 2^-126.
template <int kPair>
SHAPESCOPE_HD constexpr uint32_t a16w4_e2m1_pair(uint32_t word) {
  constexpr uint32_t kSigns = 0x80008000u, kMagnitudes = 0x01C001C0u;
  constexpr int kSignShift = 15 - a16w4_sign_bit(2 * kPair), kMagnitudeShift = 6 - a16w4_magnitude_bit(2 * kPair);
  if constexpr (kSignShift == kMagnitudeShift) {
    return a16w4_shift_left<kSignShift>(word) & (kSigns | kMagnitudes);
  } else {
    return (a16w4_shift_left<kMagnitudeShift>(word) & kMagnitudes) | (a16w4_shift_left<kSignShift>(word) & kSigns);
  }
}

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
