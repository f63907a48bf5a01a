// The per-shape heuristic of a16w8_blockscale_batched, kept apart from the kernel body.
//
// Each warp owns a 32 x 32 tile of C (2 x 4 mma.sync m16n8k16); a CTA is a grid of
// warps_m x warps_n of them, repeated warps_k times along K (each copy multiplies
// every warps_k-th K block; the partial tiles are summed in shared memory). The
// absorbed-MLA shapes are tiny (16 heads of 512 x 128 weights at TP8), so the tile is
// chosen to spread one launch over as many SMs as the shape allows and to keep the
// serial chain of K blocks per warp short, rather than to maximise reuse.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

struct A16w8Config {
  int warps_m = 1;
  int warps_n = 2;
  int warps_k = 1;
  int stages = 4;  // shared-memory pipeline depth, in groups of warps_k K blocks

  int tile_m() const { return 32 * warps_m; }
  int tile_n() const { return 32 * warps_n; }
  int threads() const { return 32 * warps_m * warps_n * warps_k; }
};

constexpr int kA16w8BlockK = 128;
constexpr int kA16w8ARowBytes = kA16w8BlockK * 2 + 16;  // bf16 row + 16 bytes: fragment reads avoid bank conflicts
constexpr int kA16w8BRowBytes = kA16w8BlockK + 16;      // e4m3 row + 16 bytes, same reason

inline int a16w8_shared_bytes(const A16w8Config& config) {
  return config.stages * config.warps_k * (config.tile_m() * kA16w8ARowBytes + config.tile_n() * kA16w8BRowBytes);
}

inline A16w8Config choose_a16w8_config(const GemmShape& shape) {
  A16w8Config config;
  if (shape.m > 32) {
    config.warps_m = 2;
    config.warps_n = 2;
  } else {
    config.warps_m = 1;
    config.warps_n = shape.n >= 512 ? 2 : 1;  // narrow N: more, smaller CTAs
    if (config.warps_n == 1 && (shape.k + kA16w8BlockK - 1) / kA16w8BlockK >= 4) {
      config.warps_k = 4;  // narrow and deep (N=128, K=512): four K blocks side by side
      config.stages = 2;
    }
  }
  return config;
}

inline std::string describe(const A16w8Config& config) {
  return "mma16816_m" + std::to_string(config.tile_m()) + "n" + std::to_string(config.tile_n()) + "k128x" +
         std::to_string(config.warps_k) + "_s" + std::to_string(config.stages);
}

}  // namespace shapescope::kernels::cuda
