// The per-shape heuristic of the W4A16 kernels (a16w4_blockscale, a16w4_blockscale_grouped), apart from
// their bodies.
//
// A CTA is four warps; each warp owns 32 columns of N (a16w4_layout.hpp) and 8 or 16 rows of M. The warps of a
// CTA sit side by side along N (warps_n, sharing the activations through L1) or along K (warps_k, their partial
// tiles summed in shared memory); CTAs split K further (split_k, summed in an fp32 workspace by the last CTA of
// each tile to arrive). At decode M the weights are all the bytes and every warp keeps kA16w4Stages - 1 chunks
// in flight; what is left to choose is how the warp tiles x chunks of work fall on warps: the heuristic
// estimates the time of every (warps_k, split_k) in units of one chunk a warp at the saturated bandwidth, wave
// by wave (a last wave of few CTAs costs as much as a full one when each of its warps walks as many chunks),
// and takes the cheapest. The old rule (16 warps on every SM, at least two chunks each) ran Llama-3.3-70B qkv
// at TP1 as 640 CTAs, 1.2 waves of 528: the second wave cost as much as the first.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/cuda/a16w4_layout.hpp"

namespace shapescope::kernels::cuda {

constexpr int kA16w4Warps = 4;
constexpr int kA16w4WarpsPerSm = 16;  // resident: four CTAs of four warps (the kernels' launch bounds)
// Warps an SM needs for the copy bandwidth. Every resident warp: planning for 8 (24 chunks, 60 KB, in flight an
// SM) measured 3% slower over the Llama-3.3-70B decode points than planning for 16 (H100, 2026-11-25).
constexpr int kA16w4SaturatingWarpsPerSm = 16;
// K chunks in a warp's shared-memory ring (a16w4_blockscale_kernel.cuh): kA16w4Stages - 1 in flight, 2.5 KB each.
constexpr int kA16w4Stages = 4;
// Each wave of CTAs starts with its rings empty: one DRAM round trip, about one chunk time.
constexpr double kA16w4WaveStartCost = 1.0;
// A split of K costs the workspace reduction (the atomics, the arrival counter, the last CTA's pass: three
// dependent round trips to L2), about two chunk times.
constexpr double kA16w4SplitCost = 2.0;
// The dense kernel can sum up to this many K splits of a tile in a thread-block cluster (the portable cluster
// size), through distributed shared memory instead of the workspace; more splits go through the workspace.
constexpr int kA16w4MostClusterSplits = 8;

// What the W4A16 heuristic needs to know about the GPU: its SMs, and how many clusters of `split` CTAs of the
// dense cluster kernel are resident at once (cudaOccupancyMaxActiveClusters with the kernel's shared memory and
// block size, the fewest over its instances; a cluster lives in one GPC, so CTA slots a GPC cannot fill with
// whole clusters stay empty). 0: not known (no GPU) or does not run, and the workspace sums those splits.
// The same mechanism as Fp8DeviceSpec::clusters_by_split, for this kernel's occupancy.
struct A16w4DeviceSpec {
  int multiprocessors = 0;
  std::array<int, kA16w4MostClusterSplits + 1> clusters_by_split{};

  int64_t fitting_clusters(int64_t split) const {
    return split >= 2 && split <= kA16w4MostClusterSplits ? clusters_by_split[std::size_t(split)] : 0;
  }
};

// The spec of GPU `ordinal` (a16w4_blockscale.cu), queried from the CUDA runtime on first use and kept.
const A16w4DeviceSpec& a16w4_device_spec(int ordinal);
// The current GPU's, or without one the reference H100's SMs and no cluster figures (the workspace sums splits).
A16w4DeviceSpec a16w4_current_spec();

struct A16w4Config {
  int rows = 16;  // M rows a CTA covers: 8 (rows 8..15 of the mma never read) or 16
  int warps_n = kA16w4Warps;
  int warps_k = 1;
  int split_k = 1;
  bool cluster_sum = false;  // the K splits summed in a thread-block cluster (dense kernel), not the workspace
  // Dense kernel, persistent grid: this many warps each walk an even run of the (tile, chunk) units, their
  // pieces of tiles summed in the workspace; 0: each CTA covers one group of tiles (the fields above).
  int64_t run_warps = 0;

  int tile_n() const { return run_warps > 0 ? kA16w4WarpN : kA16w4WarpN * warps_n; }
  int cluster_k() const { return cluster_sum ? split_k : 1; }
  int threads() const { return 32 * kA16w4Warps; }
};

// CTAs of a W4A16 grid without clusters resident at once (the kernels' launch bounds).
inline int64_t a16w4_resident_ctas(int multiprocessors) {
  return int64_t(multiprocessors) * (kA16w4WarpsPerSm / kA16w4Warps);
}

// The estimated time of `config` on `tiles_mn` warp tiles x `chunks` K chunks, in chunk times at the saturated
// bandwidth, with `resident` CTAs at once: each wave's warps walk as many chunks as the busiest of them, sharing
// the bandwidth once more of them run than saturate it.
inline double a16w4_time(const A16w4Config& config, int64_t tiles_mn, int64_t chunks, int multiprocessors,
                         int64_t resident) {
  const int64_t chunks_per_split = (chunks + config.split_k - 1) / config.split_k;
  const int64_t chunks_per_warp = (chunks_per_split + config.warps_k - 1) / config.warps_k;
  const int64_t ctas = (tiles_mn + config.warps_n - 1) / config.warps_n * config.split_k;
  const double saturating = double(multiprocessors) * kA16w4SaturatingWarpsPerSm;
  const auto wave = [&](int64_t wave_ctas) {
    return double(chunks_per_warp) * std::max(double(wave_ctas * kA16w4Warps), saturating) / saturating;
  };
  const int64_t waves = (ctas + resident - 1) / resident;
  const double last = ctas % resident == 0 ? 0.0 : wave(ctas % resident);
  return double(ctas / resident) * wave(resident) + last + double(waves) * kA16w4WaveStartCost +
         (config.split_k > 1 ? kA16w4SplitCost : 0.0);
}

// `tiles_mn`: output tiles of rows x 32 (warp tiles) the problem has in all; `chunks`: K chunks of 128. Of equal
// estimates the first wins: K split among the warps of a CTA (summed in shared memory) before among CTAs, and
// the fewest splits.
inline A16w4Config choose_a16w4_config(int64_t m_per_tile_set, int64_t tiles_mn, int64_t chunks, int multiprocessors) {
  A16w4Config best;
  best.rows = m_per_tile_set <= 8 ? 8 : 16;
  double best_time = -1.0;
  for (const int warps_k : {4, 2, 1}) {
    if (warps_k > chunks && warps_k > 1) continue;  // warps with no chunk
    const int64_t most_splits = std::max<int64_t>(chunks / warps_k, 1);
    for (int64_t split_k = 1; split_k <= most_splits; ++split_k) {
      A16w4Config config = best;
      config.warps_k = warps_k;
      config.warps_n = kA16w4Warps / warps_k;
      config.split_k = int(split_k);
      const double time =
          a16w4_time(config, tiles_mn, chunks, multiprocessors, a16w4_resident_ctas(multiprocessors));
      if (best_time < 0.0 || time < best_time) best = config, best_time = time;
    }
  }
  return best;
}

// The estimated time of the persistent grid (A16w4Config::run_warps) over `units` (tile, chunk) units of tiles
// of `chunks` units, in the same chunk times: the longest run, one ring start, and the workspace sum unless
// every run is whole tiles (a run's pieces before its last are summed while its ring stays full: one sum is
// exposed). Its warps (a16w4_run_warps): the resident ones, or one a unit when there are fewer.
inline int64_t a16w4_run_warps(int64_t units, int multiprocessors) {
  return std::min<int64_t>(units, a16w4_resident_ctas(multiprocessors) * kA16w4Warps);
}
inline double a16w4_run_time(int64_t units, int64_t chunks, int multiprocessors) {
  const int64_t warps = a16w4_run_warps(units, multiprocessors);
  const int64_t longest = (units + warps - 1) / warps;
  const double saturating = double(multiprocessors) * kA16w4SaturatingWarpsPerSm;
  const bool whole_tiles = units % warps == 0 && longest % chunks == 0;
  return double(longest) * std::max(double(warps), saturating) / saturating + kA16w4WaveStartCost +
         (whole_tiles ? 0.0 : kA16w4SplitCost);
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

// The dense kernel's configuration: the heuristic's splits, summed in a thread-block cluster where that keeps
// the grid in as many waves as the workspace's. Only whole clusters are resident, `spec.clusters_by_split` of
// them, which may be fewer CTAs than a grid without clusters keeps; the cluster is priced in the same wave model
// with those CTAs resident and the same cost of the sum (the cluster's own is not measured), so its estimate
// equals the workspace's exactly when the waves do, and is above it when the cluster costs a wave. Only splits
// of 2, 4 and 8: on the H100 (2026-11-25, formats_bench) clusters of 2 and 4 ran 1.03-1.22x the workspace's
// speed, clusters of 3 and 6 0.73-0.95x at the same waves, for a reason this price does not see.
//   The persistent grid replaces both where that grid takes more than one wave, its own estimate is lower
// (a16w4_run_time) and the rows fit one tile (over several, each M tile would stream the weights again from
// DRAM, where neighbouring CTAs of the other grid share them in L2), or as `runs` forces: true always, false
// never. In one wave the runs' pieces cost more than their even share saves (H100, 2026-11-25: Llama-3.3-70B
// gate_up TP1, 6.8 waves, 1.08-1.11x at M 1..8; gate_up TP2 and qkv TP1, one wave, 0.89-0.98x; forced at every
// one-wave shape 0.55-1.03x, 0.94x over the target set).
inline A16w4Config choose_a16w4_dense_config(int64_t m_per_tile_set, int64_t tiles_mn, int64_t chunks,
                                             const A16w4DeviceSpec& spec, std::optional<bool> runs = std::nullopt) {
  const A16w4Config workspace = choose_a16w4_config(m_per_tile_set, tiles_mn, chunks, spec.multiprocessors);
  A16w4Config best = workspace;
  int64_t best_resident = a16w4_resident_ctas(spec.multiprocessors);
  double best_time = a16w4_time(workspace, tiles_mn, chunks, spec.multiprocessors, best_resident);
  const int64_t clusters = spec.fitting_clusters(workspace.split_k);
  if (clusters > 0 && std::has_single_bit(uint64_t(workspace.split_k))) {
    A16w4Config cluster = workspace;
    cluster.cluster_sum = true;
    const double cluster_time =
        a16w4_time(cluster, tiles_mn, chunks, spec.multiprocessors, clusters * workspace.split_k);
    if (cluster_time <= best_time) best = cluster, best_time = cluster_time, best_resident = clusters * cluster.split_k;
  }
  const int64_t ctas = (tiles_mn + best.warps_n - 1) / best.warps_n * best.split_k;
  if (runs.value_or(m_per_tile_set <= 16 && ctas > best_resident &&
                    a16w4_run_time(tiles_mn * chunks, chunks, spec.multiprocessors) < best_time)) {
    A16w4Config run;
    run.rows = workspace.rows;
    run.run_warps = a16w4_run_warps(tiles_mn * chunks, spec.multiprocessors);
    return run;
  }
  return best;
}

inline std::string describe(const A16w4Config& config) {
  if (config.run_warps > 0)
    return "mma16816_m" + std::to_string(config.rows) + "n" + std::to_string(kA16w4WarpN) + "k128_stages" +
           std::to_string(kA16w4Stages) + "_runs" + std::to_string(config.run_warps);
  return "mma16816_m" + std::to_string(config.rows) + "n" + std::to_string(config.tile_n()) + "k128_wk" +
         std::to_string(config.warps_k) + "_stages" + std::to_string(kA16w4Stages) + "_split" +
         std::to_string(config.split_k) + (config.cluster_sum ? "_cluster" : "");
}

}  // namespace shapescope::kernels::cuda
