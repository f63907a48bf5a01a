// The per-shape heuristic of a16w8_blockscale_batched, kept apart from the kernel body.
//
// Each warp owns a 32 x 32 tile of C (2 x 4 mma.sync m16n8k16); a CTA is a grid of
// warps_m x warps_n of them. The absorbed-MLA shapes are tiny (16 heads of 512 x 128
// weights at TP8), so the tile is chosen to spread one launch over as many SMs as the
// shape allows rather than to maximise reuse.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

struct A16w8Config {
  int warps_m = 1;
  int warps_n = 2;
  int stages = 4;  // shared-memory pipeline depth in 128-wide K blocks

  int tile_m() const { return 32 * warps_m; }
  int tile_n() const { return 32 * warps_n; }
  int threads() const { return 32 * warps_m * warps_n; }
};

constexpr int kA16w8BlockK = 128;
constexpr int kA16w8ARowBytes = kA16w8BlockK * 2 + 16;  // bf16 row + 16 bytes: fragment reads avoid bank conflicts
constexpr int kA16w8BRowBytes = kA16w8BlockK + 16;      // e4m3 row + 16 bytes, same reason

inline int a16w8_shared_bytes(const A16w8Config& config) {
  return config.stages * (config.tile_m() * kA16w8ARowBytes + config.tile_n() * kA16w8BRowBytes);
}

inline A16w8Config choose_a16w8_config(const GemmShape& shape) {
  A16w8Config config;
  if (shape.m > 32) {
    config.warps_m = 2;
    config.warps_n = 2;
  } else {
    config.warps_m = 1;
    config.warps_n = shape.n >= 512 ? 2 : 1;  // narrow N: more, smaller CTAs
  }
  return config;
}

inline std::string describe(const A16w8Config& config) {
  return "mma16816_m" + std::to_string(config.tile_m()) + "n" + std::to_string(config.tile_n()) + "k128_s" +
         std::to_string(config.stages);
}

}  // namespace shapescope::kernels::cuda
