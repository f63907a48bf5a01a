// The per-shape heuristic of our block-scaled FP8 GEMMs (fp8_blockscale and
// fp8_blockscale_bpreshuffle), kept apart from the kernel bodies.
//
// One kernel family covers every M: a 64- or 128-row tile of A by a 128-column
// tile of B, 128-wide K blocks. Small M (decode) is weight-streaming: a 64-row
// tile (two CTAs per SM) and split-K chosen by a small cost model, so enough weight
// bytes are in flight to approach the HBM roofline without drowning in reductions.
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

// A cost model of the grid, in µs, calibrated on an H100 with kernel_bench
// (docs/KERNEL_NOTES.md). Each wave of CTAs takes the longer of moving its weight bytes
// at HBM speed and one CTA working through its K blocks (a CTA's loop is serial: copy
// wait, barrier, wgmma, wait, promotion), plus a start-up. Split-K adds a fixed cost
// (reductions drained by a fence, an arrival counter, the last CTA's pass) and one
// 8-byte L2 reduction per output pair and split.
struct GridCostModel {
  double hbm_bytes_per_us = 3.0e6;    // measured device-to-device copy bandwidth
  double streaming_kblock_us = 0.68;  // 64-row tile: 16 KB of B per K block at ~24 GB/s per CTA
  double compute_kblock_us = 1.2;     // 128-row tile: 4.2 MFLOP per K block at ~3.6 TFLOP/s per SM
  double wave_startup_us = 2.0;
  double split_fixed_us = 5.0;        // M=1, N=7168, K=256: split 2 ran 11.8 µs, split 1 6.5 µs
  double reductions_per_us = 15000;   // N=7168, K=2048: M=16 split 2 ran 8 µs over M=1 split 2
  double kblock_bytes = 128.0 * 128.0;

  double microseconds(const GemmShape& shape, int block_m, int64_t tiles, int64_t kblocks, int64_t split,
                      int64_t resident_ctas) const {
    const int64_t per_split = (kblocks + split - 1) / split;
    const int64_t used_splits = (kblocks + per_split - 1) / per_split;
    const int64_t ctas = tiles * used_splits;
    const double kblock_us = block_m == 64 ? streaming_kblock_us : compute_kblock_us;
    double total = 0;
    for (int64_t done = 0; done < ctas; done += resident_ctas) {
      const double wave_ctas = double(std::min(resident_ctas, ctas - done));
      total += std::max(wave_ctas * double(per_split) * kblock_bytes / hbm_bytes_per_us, double(per_split) * kblock_us) +
               wave_startup_us;
    }
    if (used_splits > 1)
      total += split_fixed_us + double(shape.m) * double(shape.n) / 2.0 * double(used_splits) / reductions_per_us;
    return total;
  }
};

inline Fp8BlockscaleConfig choose_fp8_blockscale_config(const GemmShape& shape, int multiprocessors) {
  Fp8BlockscaleConfig config;
  config.block_m = shape.m <= kFp8SmallMLimit ? 64 : 128;
  const int64_t tiles = (shape.m + config.block_m - 1) / config.block_m * ((shape.n + config.block_n - 1) / config.block_n);
  const int64_t kblocks = (shape.k + kFp8BlockK - 1) / kFp8BlockK;
  const int64_t resident_ctas = int64_t(multiprocessors) * config.ctas_per_sm();
  int64_t split = 1;
  if (kblocks > 1) {  // the split the cost model likes best (the smallest among near-equals)
    const GridCostModel model;
    double best = model.microseconds(shape, config.block_m, tiles, kblocks, 1, resident_ctas);
    for (int64_t candidate = 2; candidate <= kblocks; ++candidate) {
      const double cost = model.microseconds(shape, config.block_m, tiles, kblocks, candidate, resident_ctas);
      if (cost < best * 0.97) {
        best = cost;
        split = candidate;
      }
    }
  }
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
