// The pre-shuffled B layout of the bpreshuffle kernels (kernels/mfma_preshuffled_b.hpp): every code of
// B lands in one place and comes back, padding is zero, and what one lane reads for one MFMA is exactly
// its column's 8 codes of the step, the 64 lanes' reads forming one contiguous 512-byte run.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/mfma_preshuffled_b.hpp"

namespace shapescope::kernels::mfma_b {
namespace {

struct Shape {
  int64_t n, k;
};

// Tile multiples, one-off edges, partial scale blocks and random sizes.
std::vector<Shape> shapes_under_test() {
  std::vector<Shape> shapes = {{32, 128}, {64, 256}, {1, 1}, {33, 129}, {31, 16}, {200, 336}, {7, 1000}, {96, 720}};
  std::mt19937_64 random(0x5b0ff1e);
  std::uniform_int_distribution<int64_t> n_of(1, 300), k_of(1, 700);
  for (int i = 0; i < 12; ++i) shapes.push_back({n_of(random), k_of(random)});
  return shapes;
}

// Codes 1..255: a zero in the shuffled buffer can only be padding.
std::vector<uint8_t> random_codes(const Shape& shape, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<int> code_of(1, 255);
  std::vector<uint8_t> codes(std::size_t(shape.n * shape.k));
  for (uint8_t& code : codes) code = uint8_t(code_of(random));
  return codes;
}

std::vector<uint8_t> shuffle(const std::vector<uint8_t>& row_major, const Shape& shape) {
  std::vector<uint8_t> shuffled(std::size_t(shuffled_bytes(shape.n, shape.k)));
  for (int64_t offset = 0; offset < int64_t(shuffled.size()); ++offset)
    shuffled[std::size_t(offset)] = shuffled_byte(row_major.data(), shape.n, shape.k, offset);
  return shuffled;
}

std::string label(const Shape& shape) { return "N=" + std::to_string(shape.n) + " K=" + std::to_string(shape.k); }

TEST(MfmaPreshuffledB, EveryCodeRoundTripsAndPaddingIsZero) {
  uint64_t seed = 1;
  for (const Shape& shape : shapes_under_test()) {
    SCOPED_TRACE(label(shape));
    const std::vector<uint8_t> row_major = random_codes(shape, ++seed);
    const std::vector<uint8_t> shuffled = shuffle(row_major, shape);
    EXPECT_EQ(int64_t(shuffled.size()), column_tiles(shape.n) * kTileColumns * k_blocks(shape.k) * kBlockK);
    std::vector<bool> holds_code(shuffled.size(), false);
    const int64_t blocks = k_blocks(shape.k);
    for (int64_t column = 0; column < shape.n; ++column)
      for (int64_t k = 0; k < shape.k; ++k) {
        const int64_t offset = shuffled_offset(column, k, blocks);
        ASSERT_GE(offset, 0);
        ASSERT_LT(offset, int64_t(shuffled.size()));
        ASSERT_FALSE(holds_code[std::size_t(offset)]) << "two codes at byte " << offset;
        holds_code[std::size_t(offset)] = true;
        ASSERT_EQ(shuffled[std::size_t(offset)], row_major[std::size_t(column * shape.k + k)])
            << "column " << column << " k " << k;
      }
    for (std::size_t offset = 0; offset < shuffled.size(); ++offset) {
      if (!holds_code[offset]) {
        ASSERT_EQ(shuffled[offset], 0) << "padding byte " << offset;
      }
    }
  }
}

TEST(MfmaPreshuffledB, EachLaneReadsItsColumnsCodesInOneContiguousWavefrontRead) {
  uint64_t seed = 100;
  for (const Shape& shape : shapes_under_test()) {
    SCOPED_TRACE(label(shape));
    const std::vector<uint8_t> row_major = random_codes(shape, ++seed);
    const std::vector<uint8_t> shuffled = shuffle(row_major, shape);
    const int64_t blocks = k_blocks(shape.k);
    int64_t expected_offset = 0;  // tiles, steps and lanes in storage order: no gap, no overlap
    for (int64_t tile = 0; tile < column_tiles(shape.n); ++tile)
      for (int64_t block = 0; block < blocks; ++block)
        for (int step = 0; step < kStepsPerBlock; ++step)
          for (int lane = 0; lane < kWaveLanes; ++lane) {
            const int64_t offset = lane_offset(tile, block, step, lane, blocks);
            ASSERT_EQ(offset, expected_offset) << "tile " << tile << " block " << block << " step " << step;
            expected_offset += kLaneBytes;
            const int64_t column = tile * kTileColumns + lane_column(lane);
            for (int byte = 0; byte < kLaneBytes; ++byte) {
              const int64_t k = block * kBlockK + step * kStepK + lane_k(lane) + byte;
              const uint8_t expected =
                  column < shape.n && k < shape.k ? row_major[std::size_t(column * shape.k + k)] : uint8_t(0);
              ASSERT_EQ(shuffled[std::size_t(offset + byte)], expected)
                  << "lane " << lane << " byte " << byte << " (column " << column << ", k " << k << ")";
            }
          }
    EXPECT_EQ(expected_offset, int64_t(shuffled.size()));
  }
}

// The MFMA operand layout itself: 32 columns, two halves of the step's 16 K, each lane a distinct pair.
TEST(MfmaPreshuffledB, LanesCoverTheStepsColumnsAndKOnce) {
  std::vector<int> seen(kTileColumns * kStepK, 0);
  for (int lane = 0; lane < kWaveLanes; ++lane)
    for (int byte = 0; byte < kLaneBytes; ++byte) ++seen[std::size_t(lane_column(lane) * kStepK + lane_k(lane) + byte)];
  for (const int count : seen) EXPECT_EQ(count, 1);
}

}  // namespace
}  // namespace shapescope::kernels::mfma_b
