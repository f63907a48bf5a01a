// The per-shape heuristic of the W4A16 kernels (a16w4_blockscale, a16w4_blockscale_grouped), apart from
// their bodies.
//
// A CTA is four warps; each warp owns 32 columns of N (a16w4_layout.hpp) and 8 or 16 rows of M. The warps of a
// CTA sit side by side along N (warps_n, sharing the activations through L1) or along K (warps_k, their partial
// tiles summed in shared memory); CTAs split K further (split_k, summed in an fp32 workspace by the last CTA of
// each tile to arrive). At decode M the weights are all the bytes, so the heuristic only has to keep enough
// loads in flight: it aims for `kA16w4WarpsPerSm` warps on every SM with each warp walking at least
// `kA16w4MinChunksPerWarp` chunks of K, and splits K no further than that.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/cuda/a16w4_layout.hpp"

namespace shapescope::kernels::cuda {

constexpr int kA16w4Warps = 4;
constexpr int kA16w4WarpsPerSm = 16;
constexpr int kA16w4MinChunksPerWarp = 2;

struct A16w4Config {
  int rows = 16;  // M rows a CTA covers: 8 (rows 8..15 of the mma never read) or 16
  int warps_n = kA16w4Warps;
  int warps_k = 1;
  int split_k = 1;

  int tile_n() const { return kA16w4WarpN * warps_n; }
  int threads() const { return 32 * kA16w4Warps; }
};

// `tiles_mn`: output tiles of rows x 32 (warp tiles) the problem has in all; `chunks`: K chunks of 128.
inline A16w4Config choose_a16w4_config(int64_t m_per_tile_set, int64_t tiles_mn, int64_t chunks, int multiprocessors) {
  A16w4Config config;
  config.rows = m_per_tile_set <= 8 ? 8 : 16;
  const int64_t wanted = int64_t(multiprocessors) * kA16w4WarpsPerSm;
  const int64_t along_k = std::clamp<int64_t>((wanted + tiles_mn - 1) / std::max<int64_t>(tiles_mn, 1), 1,
                                              std::max<int64_t>(chunks / kA16w4MinChunksPerWarp, 1));
  config.warps_k = along_k >= 4 ? 4 : along_k >= 2 ? 2 : 1;
  config.warps_n = kA16w4Warps / config.warps_k;
  config.split_k = int(std::clamp<int64_t>((along_k + config.warps_k - 1) / config.warps_k, 1, chunks));
  return config;
}

// Past decode the streaming kernel stops being the fast way to run a dense FP4 layer: each 16-row tile of M
// streams all the weights again and its mma.sync loop runs at ~12% of the bf16 peak, where cuBLASLt's bf16 GEMM
// runs near 70%. The dense kernel then dequantizes the weights to bf16 inside the run and hands them to
// cuBLASLt. Both costs in units of the time to read N x K bytes at the copy bandwidth, with `flops_per_byte` the
// device's bf16 peak over its bandwidth:
//   streaming:     max(tiles of 16 rows x 0.5 bytes, 2 M / (streaming MFU x flops_per_byte))
//   dequantizing:  (0.5 read + 2 written) / the dequantization's share of the copy bandwidth
//                  + 2 (the GEMM reads the bf16 weights) + 2 M / (GEMM MFU x flops_per_byte)
// The constants are measured (H100, 2026-11-25, Llama-3.3-70B-FP4 at TP2, docs/formats.md): the streaming
// kernel's time at M 48..96 fits its MFU term within 3%, the dequantization ran at 58% of the copy bandwidth
// (the dequantizing path's time less cuBLASLt bf16's at the same M, over four shapes, 1.43-1.60 ps a weight).
constexpr double kA16w4StreamingMfu = 0.12;
constexpr double kBf16GemmMfu = 0.7;
constexpr double kA16w4DequantizeCopyShare = 0.58;

inline bool a16w4_dequantizes(int64_t m, double flops_per_byte) {
  const double streaming = std::max(double((m + 15) / 16) * 0.5, 2.0 * double(m) / (kA16w4StreamingMfu * flops_per_byte));
  const double dequantizing =
      2.5 / kA16w4DequantizeCopyShare + 2.0 + 2.0 * double(m) / (kBf16GemmMfu * flops_per_byte);
  return dequantizing < streaming;
}

inline std::string describe(const A16w4Config& config) {
  return "mma16816_m" + std::to_string(config.rows) + "n" + std::to_string(config.tile_n()) + "k128_wk" +
         std::to_string(config.warps_k) + "_split" + std::to_string(config.split_k);
}

}  // namespace shapescope::kernels::cuda
