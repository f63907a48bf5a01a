// B (e4m3 codes, logically [n][k] row-major) pre-shuffled for the B operand of AMD's
// v_mfma_f32_32x32x16_fp8_fp8, so that one wavefront's B load for one MFMA is 512 contiguous
// bytes, lane L reading bytes 8L..8L+7 (one coalesced read), and a 32-column x 128-K tile (one
// scale block of K) is 4 KB in one piece:
//   [column tile = column / 32][K block = k / 128][MFMA step = (k % 128) / 16][lane][8 bytes]
// with lane = column % 32 + 32 * ((k % 16) / 8) and byte = k % 8: the operand layout of the
// 32x32x16 FP8 MFMA (lane L feeds column L % 32, K codes 8 (L / 32) .. +7 of the step).
// Tiles are padded with zero codes past N and K, so a reader needs no edge checks.
// One definition for the device shuffle (nvcc and hipcc), the kernels that read it and the CPU tests.
#pragma once

#include <cstdint>

#include "kernels/host_device.hpp"

namespace shapescope::kernels::mfma_b {

constexpr int kTileColumns = 32;   // B columns (N) of one 32x32 MFMA
constexpr int kBlockK = 128;       // K of one scale block: a tile's K extent
constexpr int kStepK = 16;         // K of one MFMA
constexpr int kLaneBytes = 8;      // codes one lane feeds one MFMA
constexpr int kWaveLanes = 64;
constexpr int kStepBytes = kWaveLanes * kLaneBytes;            // one wavefront's read per MFMA
constexpr int kStepsPerBlock = kBlockK / kStepK;
constexpr int kTileBytes = kStepsPerBlock * kStepBytes;        // 32 columns x 128 K
static_assert(kStepBytes == kTileColumns * kStepK, "a step's read holds exactly its 32 x 16 codes");

// The column and first K (within the MFMA step) lane `lane` feeds: the MFMA operand layout, shared
// by the row-major A operand and the pre-shuffled B.
SHAPESCOPE_HD int lane_column(int lane) { return lane % kTileColumns; }
SHAPESCOPE_HD int lane_k(int lane) { return kLaneBytes * (lane / kTileColumns); }

SHAPESCOPE_HD int64_t k_blocks(int64_t k) { return (k + kBlockK - 1) / kBlockK; }
SHAPESCOPE_HD int64_t column_tiles(int64_t n) { return (n + kTileColumns - 1) / kTileColumns; }
SHAPESCOPE_HD int64_t shuffled_bytes(int64_t n, int64_t k) { return column_tiles(n) * k_blocks(k) * kTileBytes; }

// Byte offset of the 8 codes lane `lane` reads for MFMA step `step` of tile (column_tile, k_block).
SHAPESCOPE_HD int64_t lane_offset(int64_t column_tile, int64_t k_block, int step, int lane, int64_t k_blocks) {
  return ((column_tile * k_blocks + k_block) * kStepsPerBlock + step) * kStepBytes + int64_t(lane) * kLaneBytes;
}

// Where code B[column][k] is stored.
SHAPESCOPE_HD int64_t shuffled_offset(int64_t column, int64_t k, int64_t k_blocks) {
  const int in_block = int(k % kBlockK), in_step = in_block % kStepK;
  const int lane = int(column % kTileColumns) + kTileColumns * (in_step / kLaneBytes);
  return lane_offset(column / kTileColumns, k / kBlockK, in_block / kStepK, lane, k_blocks) + in_step % kLaneBytes;
}

// The code stored at byte `offset` of B [n][k] (row-major) shuffled: zero past N or K.
SHAPESCOPE_HD uint8_t shuffled_byte(const uint8_t* row_major, int64_t n, int64_t k, int64_t offset) {
  const int64_t tile = offset / kTileBytes, kb_count = k_blocks(k);
  const int in_tile = int(offset % kTileBytes);
  const int lane = (in_tile % kStepBytes) / kLaneBytes;
  const int64_t column = (tile / kb_count) * kTileColumns + lane_column(lane);
  const int64_t source_k =
      (tile % kb_count) * kBlockK + (in_tile / kStepBytes) * kStepK + lane_k(lane) + in_tile % kLaneBytes;
  return column < n && source_k < k ? row_major[column * k + source_k] : uint8_t(0);
}

}  // namespace shapescope::kernels::mfma_b
