// The per-shape heuristic of our block-scaled FP8 GEMMs (fp8_blockscale and
// fp8_blockscale_bpreshuffle), kept apart from the kernel bodies.
//
// One kernel family covers every M: a 64- or 128-row tile of A by a 128-column
// tile of B, 128-wide K blocks. Small M (decode) is weight-streaming: a 64-row
// tile (two CTAs per SM) and split-K until the grid covers the SMs twice, so
// enough weight bytes are in flight to approach the HBM roofline.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

struct Fp8BlockscaleConfig {
  int block_m = 64;           // rows of A per CTA: 64 (one warpgroup) or 128 (two)
  int block_n = 128;          // columns of C per CTA (one wgmma n128)
  int stages = 4;             // shared-memory pipeline depth, in 128-wide K blocks
  int split_k = 1;            // CTAs sharing one output tile along K
  int kblocks_per_split = 1;  // 128-wide K blocks each of those CTAs reduces

  int ctas_per_sm() const { return block_m == 64 ? 2 : 1; }
  int threads() const { return block_m / 64 * 128; }
  int shared_bytes() const { return stages * (block_m + block_n) * 128 + 1024; }  // + 1024 to align the tiles
};

constexpr int kFp8BlockK = 128;
constexpr int kFp8SmallMLimit = 64;

inline Fp8BlockscaleConfig choose_fp8_blockscale_config(const GemmShape& shape, int multiprocessors) {
  Fp8BlockscaleConfig config;
  config.block_m = shape.m <= kFp8SmallMLimit ? 64 : 128;
  const int64_t tiles = (shape.m + config.block_m - 1) / config.block_m * ((shape.n + config.block_n - 1) / config.block_n);
  const int64_t kblocks = (shape.k + kFp8BlockK - 1) / kFp8BlockK;
  const int64_t resident_ctas = int64_t(multiprocessors) * config.ctas_per_sm();
  int64_t split = 1;
  if (tiles < resident_ctas) split = std::min<int64_t>(kblocks, (resident_ctas + tiles - 1) / tiles);
  const int64_t per_split = (kblocks + split - 1) / std::max<int64_t>(split, 1);
  config.kblocks_per_split = int(std::max<int64_t>(per_split, 1));
  config.split_k = int((kblocks + config.kblocks_per_split - 1) / config.kblocks_per_split);  // no empty split
  return config;
}

inline std::string describe(const Fp8BlockscaleConfig& config) {
  return (config.block_m <= kFp8SmallMLimit ? std::string("stream") : std::string("tile")) + "_m" +
         std::to_string(config.block_m) + "n" + std::to_string(config.block_n) + "k128_s" +
         std::to_string(config.stages) + "_splitk" + std::to_string(config.split_k);
}

}  // namespace shapescope::kernels::cuda
