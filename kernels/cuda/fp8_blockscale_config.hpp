// The per-shape heuristic of our block-scaled FP8 GEMMs (fp8_blockscale and
// fp8_blockscale_bpreshuffle), kept apart from the kernel bodies.
//
// One kernel family covers every M: a persistent grid of one CTA per SM, work units
// of a 64-, 128- or 192-row tile of A by a 128- or 256-column tile of B, 128-wide K
// blocks, as deep a shared-memory ring as fits. Small M (decode) is weight-streaming:
// 64-row units, two math warpgroups on alternate K blocks, and split-K across the CTAs
// of a cluster where too few tiles would leave SMs idle. Larger M picks the tile shape
// and split a small cost model of the grid prefers. Where the tiles leave the last wave
// short of the SMs, the model may prefer splitting that wave's tiles along K across CTAs
// outside any cluster (fp8_blockscale_kernel.cuh): the whole waves run as tiles, the rest
// as runs of K blocks reduced through global memory, either equal K ranges of each tile or
// stream-K runs laid over the tiles end to end (fp8_tail_runs.hpp). Everything
// device-dependent comes from an Fp8DeviceSpec (fp8_blockscale_device_spec.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "common/user_error.hpp"
#include "kernels/cuda/forced_setting.hpp"
#include "kernels/cuda/fp8_blockscale_device_spec.hpp"
#include "kernels/cuda/fp8_tail_runs.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::kernels::cuda {

constexpr int kFp8BlockK = 128;
constexpr int kFp8SmallMLimit = 64;
// The rings of the compiled instances are sized for the opt-in shared memory of sm_90 (the
// only architecture they are built for: H100, H200 and GH200 all offer 227 KB per block),
// less the 1 KB alignment of the dynamic part and the barriers (static shared memory). A
// device offering less runs only the configurations that fit it (fp8_fits_device).
constexpr int kFp8CompiledSharedOptin = 227 * 1024;
constexpr int kFp8BarrierBytes = 256;
constexpr int kFp8RingBudget = kFp8CompiledSharedOptin - 1024 - kFp8BarrierBytes;

// Shared memory of one CTA, less the ring: the staged bf16 C tile, the partial f32
// tiles of K groups 1.., and under split-K this rank's partial tile.
constexpr int fp8_fixed_shared_bytes(int row_groups, int k_groups, int block_n, bool cluster_split) {
  const int partial_tile = row_groups * 64 * block_n * 4;
  return row_groups * 64 * block_n * 2 + (k_groups - 1 + (cluster_split ? 1 : 0)) * partial_tile;
}
// One ring stage: the A and B tiles of a K block and the A rows' scales for it.
constexpr int fp8_stage_bytes(int row_groups, int block_n) {
  return (row_groups * 64 + block_n) * kFp8BlockK + row_groups * 64 * 4;
}
// The deepest ring that fits beside them, a multiple of the K groups (each stage always
// serves one group); 0: the configuration does not fit.
constexpr int fp8_stages(int row_groups, int k_groups, int block_n, bool cluster_split) {
  const int fixed = fp8_fixed_shared_bytes(row_groups, k_groups, block_n, cluster_split);
  const int fitting = std::max(0, kFp8RingBudget - fixed) / fp8_stage_bytes(row_groups, block_n);
  return fitting / k_groups * k_groups;
}

struct Fp8BlockscaleConfig {
  int row_groups = 1;         // math warpgroups along M, 64 rows each: the tile has 64 * row_groups rows
  int k_groups = 1;           // groups of them taking alternate K blocks of one tile
  int block_n = 128;          // columns of the tile: 128 or 256 (two wgmma n128 passes)
  int split_k = 1;            // CTAs of a cluster sharing one output tile along K
  int kblocks_per_split = 1;  // 128-wide K blocks each of those CTAs reduces
  int ctas = 1;               // persistent grid: at most one CTA per SM, whole clusters
  // Split-K over the last wave (unclustered only; tail_kblocks 0: off): tiles [0, dp_tiles)
  // run whole, the others in runs of tail_kblocks K blocks, one per CTA: K ranges of one tile,
  // or (stream_k) runs laid over the tail tiles end to end.
  int dp_tiles = 0;
  int tail_kblocks = 0;
  bool stream_k = false;
  // Each CTA's first unit fits in the ring and its B tiles load before the previous grid ends
  // (programmatic dependent launch; DenseWeightsAheadSchedule).
  bool weights_ahead = false;

  int block_m() const { return row_groups * 64; }
  bool cluster_split() const { return split_k > 1; }
  bool tail_split() const { return tail_kblocks > 0; }
  // The runs of the tail tiles (tiles: all of the GEMM's).
  Fp8TailRuns tail_runs(int64_t kblocks, int64_t tiles) const {
    const int ranges = int((kblocks + tail_kblocks - 1) / tail_kblocks);
    return Fp8TailRuns{int(tiles) - dp_tiles, int(kblocks), stream_k ? int(kblocks) : ranges * tail_kblocks,
                       tail_kblocks};
  }
  // The CTAs that reduce one output tile along K: the cluster, or the most runs of a tail tile.
  int ctas_per_tile(int64_t kblocks) const {
    return tail_split() ? tail_runs(kblocks, dp_tiles + 1).most_runs_per_tile() : split_k;
  }
  int stages() const { return fp8_stages(row_groups, k_groups, block_n, cluster_split()); }
  int threads() const { return (row_groups * k_groups + 1) * 128; }  // + the copy warpgroup
  int shared_bytes() const {
    return stages() * fp8_stage_bytes(row_groups, block_n) +
           fp8_fixed_shared_bytes(row_groups, k_groups, block_n, cluster_split()) + 1024;
  }
};

// One compiled kernel instance (for each weight order): the tile and whether it splits K
// across the CTAs of a cluster (any split of 2..kFp8MaxSplit, chosen at launch).
struct Fp8Instance {
  int row_groups, k_groups, block_n;
  bool cluster_split;

  constexpr bool runs(const Fp8BlockscaleConfig& c) const {
    return c.row_groups == row_groups && c.k_groups == k_groups && c.block_n == block_n &&
           c.cluster_split() == cluster_split;
  }
  constexpr int stages() const { return fp8_stages(row_groups, k_groups, block_n, cluster_split); }
  // Its configuration with `split` CTAs per cluster (before the grid is sized).
  Fp8BlockscaleConfig with_split_k(int split) const {
    Fp8BlockscaleConfig config{row_groups, k_groups, block_n};
    config.split_k = split;
    return config;
  }
};

// The instances fp8_blockscale.cu compiles, one line each (its launch table is generated
// from this list). At most three math warpgroups (registers); no 256-wide split (its partial
// tile leaves no room for a ring). The order is the heuristic's tie order: among configurations
// within 3% of each other, the earlier wins.
inline constexpr Fp8Instance kFp8Instances[] = {
    {1, 2, 128, false}, {1, 2, 128, true},  // 64 x 128, two K groups (decode: weight streaming)
    {2, 1, 128, false}, {2, 1, 128, true},  // 128 x 128
    {3, 1, 128, false},                     // 192 x 128
    {2, 1, 256, false},                     // 128 x 256: two sub-tiles share one block product
};
constexpr bool fp8_instances_valid() {
  for (std::size_t i = 0; i < std::size(kFp8Instances); ++i) {
    const Fp8Instance& a = kFp8Instances[i];
    if (a.stages() < 3 || a.stages() % a.k_groups != 0) return false;  // a ring, each stage serving one K group
    for (std::size_t j = 0; j < i; ++j) {
      const Fp8Instance& b = kFp8Instances[j];
      if (a.row_groups == b.row_groups && a.k_groups == b.k_groups && a.block_n == b.block_n &&
          a.cluster_split == b.cluster_split)
        return false;  // listed twice
    }
  }
  return true;
}
static_assert(fp8_instances_valid(), "each instance once, each with a ring of 3+ stages, a multiple of its K groups");
// The tallest tile: A and its scales are allocated in whole tiles of up to this many rows.
constexpr int fp8_tallest_tile_rows() {
  int rows = 0;
  for (const Fp8Instance& instance : kFp8Instances) rows = std::max(rows, instance.row_groups * 64);
  return rows;
}

// Which tiles run the split of the last wave along K: not the 192-row tile, whose three math
// warpgroups have no register to spare for it (its main loop spilled).
constexpr bool fp8_tail_split_compiled(int row_groups) { return row_groups < 3; }

// Which instances load B ahead of the previous grid: the unclustered 64-row decode tile only
// (the other instances stay the machine code they were).
constexpr bool fp8_weights_ahead_compiled(int row_groups, bool cluster_split) { return row_groups == 1 && !cluster_split; }

// The f32 partial tile a CTA of `config` hands on (split-K over the last wave), and the largest of any instance.
inline int64_t fp8_partial_tile_floats(const Fp8BlockscaleConfig& config) {
  return int64_t(config.block_m()) * config.block_n;
}
constexpr int64_t fp8_largest_partial_tile_floats() {
  int64_t floats = 0;
  for (const Fp8Instance& instance : kFp8Instances)
    floats = std::max<int64_t>(floats, int64_t(instance.row_groups) * 64 * instance.block_n);
  return floats;
}

// The index of the instance that runs `config` in kFp8Instances, or -1 when none does.
constexpr int fp8_instance_index(const Fp8BlockscaleConfig& config) {
  for (std::size_t i = 0; i < std::size(kFp8Instances); ++i)
    if (kFp8Instances[i].runs(config)) return int(i);
  return -1;
}
inline bool fp8_config_compiled(const Fp8BlockscaleConfig& config) { return fp8_instance_index(config) >= 0; }

// Whether a configuration's CTA (ring, staging, partial tiles, barriers) fits the device's
// shared memory per block.
inline bool fp8_fits_device(const Fp8BlockscaleConfig& config, const Fp8DeviceSpec& spec) {
  return config.shared_bytes() + kFp8BarrierBytes <= spec.shared_bytes_per_block_optin;
}

// A cost model of the persistent grid, in µs. The grid runs ceil(tiles / clusters) rounds
// of units; a K block of a unit costs the longest of its tensor-core time, one warpgroup's
// serial chain (shared by the K groups) and moving its stage into the SM, whose intake is
// capped; each unit ends with writing its tile out. A round cannot beat the bytes it pulls
// from HBM: the B columns its tiles touch and its share of A and C (a partial last wave
// pulls less, so a tail of few tiles runs at the SMs' pace, not at HBM's). Split-K adds
// rank 0's pass over the other ranks' partial tiles and a fixed cost for the cluster.
// Constants: a least-squares fit of the log error (bench/cost_model_fit --fit) to the 2245
// graph-timed H100 points above 9 µs of every tile forced on six shapes, M = 16..4096, and the
// decode splits forced (profiles/.../calibration at f4ae3b1); KERNEL_NOTES v13.
// The model prices a GEMM through its Work, so dense and grouped GEMMs share it.
struct GridCostModel {
  double hbm_bytes_per_us = 2.58e6;  // DeepSeek-V3 TP1 gate_up at decode: 264 MB in 100 µs (graph-timed)
  // One SM's intake of stage bytes per tile shape, as fitted.
  double intake_64x128 = 91.8e3;
  double intake_128x128 = 74.2e3;
  double intake_192x128 = 71.5e3;
  double intake_128x256 = 67.2e3;
  double intake_bytes_per_us(const Fp8BlockscaleConfig& config) const {
    if (config.row_groups == 1) return intake_64x128;
    if (config.row_groups == 3) return intake_192x128;
    return config.block_n == 256 ? intake_128x256 : intake_128x128;
  }
  // Where A outgrows half the L2 it no longer stays there while the B columns pass, and
  // every tile shape's intake drops by this factor (the M >= 4096 points with A >= 29 MB).
  double intake_with_a_beyond_l2 = 0.95;
  double tensor_us = 0.173;           // one 64 x 128 x 128 block product
  double chain_us = 0.377;            // one warpgroup's K block: wgmma, wait, promotion
  double startup_us = 3.19;           // launch and the graph-timed measurement floor
  double unit_us = 0.257;             // a unit's end: K-group sums, staging C, a barrier
  double store_bytes_per_us = 42.4e3; // one SM's share of writing output tiles out
  double split_fixed_us = 2.57;
  double partial_tile_us = 1.04;      // rank 0 pulling one 64 x 128 f32 partial tile from another SM
  // A stream-K run's K block costs this much more than a whole tile's: the tiles sharing a B
  // column (and the columns sharing an A row block) no longer read each K block at about the
  // same time. A least-squares fit of the log error to 260 graph-timed H100 points of stream-K
  // runs (N=1280/2560 K=8192, N=7168 K=12288, M 16..4096; profiles/.../2026-11-25-1dc1d68/
  // stream_k_runs_at_any_k_block.tar.xz), the other constants as they are.
  double stream_k_kblock_factor = 1.4;

  // What the model needs of a GEMM under one tile shape.
  struct Work {
    int64_t tiles = 0, kblocks = 0;
    double a_rows = 0;             // rows of A one ring stage carries
    double a_bytes = 0;            // all of A
    double a_and_c_bytes = 0;      // A read once and C written once
    double b_bytes = 0;            // every weight the GEMM reads
    double b_column_bytes = 0;     // one tile column of B (block_n x K)
    double tiles_per_b_column = 1; // tiles sharing one B tile column (run back to back)
  };
  // The 64-row decode tile's partial tiles move only their rows that hold output, that share of
  // the tile: at most the rows of one ring stage of A (M rounded up to 8; grouped: the largest
  // group's); taller tiles move all rows.
  static double output_row_share(const Work& work, const Fp8BlockscaleConfig& config) {
    return config.row_groups == 1 ? work.a_rows / double(config.block_m()) : 1.0;
  }

  static Work dense_work(const GemmShape& shape, const Fp8BlockscaleConfig& config) {
    Work work;
    const int64_t m_blocks = (shape.m + config.block_m() - 1) / config.block_m();
    const int64_t n_blocks = (shape.n + config.block_n - 1) / config.block_n;
    work.kblocks = (shape.k + kFp8BlockK - 1) / kFp8BlockK;
    work.tiles = m_blocks * n_blocks;
    work.a_rows = double(std::min<int64_t>(config.block_m(), (shape.m + 7) / 8 * 8));
    work.a_bytes = double(shape.m) * double(shape.k);
    work.a_and_c_bytes = work.a_bytes + 2.0 * double(shape.m) * double(shape.n);
    work.b_column_bytes = double(config.block_n) * double(shape.k);
    work.b_bytes = double(n_blocks) * work.b_column_bytes;
    work.tiles_per_b_column = double(m_blocks);
    return work;
  }

  double microseconds(const GemmShape& shape, const Fp8BlockscaleConfig& config, int64_t split,
                      const Fp8DeviceSpec& spec) const {
    return microseconds(dense_work(shape, config), config, split, spec);
  }

  double microseconds(const Work& work, const Fp8BlockscaleConfig& config, int64_t split,
                      const Fp8DeviceSpec& spec) const {
    if (config.tail_split()) return tail_split_microseconds(work, config, spec);
    const int64_t per_split = (work.kblocks + split - 1) / split;
    const int64_t used_splits = (work.kblocks + per_split - 1) / per_split;
    const int64_t fitting = spec.fitting_clusters(used_splits);
    if (fitting < 1 || work.tiles < 1) return INFINITY;  // this split does not run on the device
    const int64_t clusters = std::min(work.tiles, fitting);
    const int64_t rounds = (work.tiles + clusters - 1) / clusters;
    const double unit_us_total = double(per_split) * kblock_us(work, config, spec) + unit_end_us(config);
    const auto round_us = [&](int64_t active) { return std::max(unit_us_total, hbm_us(work, active)); };
    const int64_t last_round = work.tiles % clusters;
    double total = double(work.tiles / clusters) * round_us(clusters) + (last_round ? round_us(last_round) : 0.0) +
                   startup_us;
    if (used_splits > 1)
      total += split_fixed_us + double(rounds * (used_splits - 1) * config.row_groups) * partial_tile_us *
                                    output_row_share(work, config);
    return total;
  }

  // One K block of a unit: the longest of its tensor-core time, one warpgroup's serial chain
  // (shared by the K groups) and moving its stage into the SM.
  double kblock_us(const Work& work, const Fp8BlockscaleConfig& config, const Fp8DeviceSpec& spec) const {
    const double stage_bytes = (work.a_rows + config.block_n) * kFp8BlockK;
    const double sub_tiles = double(config.block_n / 128);
    const double intake =
        intake_bytes_per_us(config) * (2 * work.a_bytes > double(spec.l2_bytes) ? intake_with_a_beyond_l2 : 1.0);
    return std::max(
        {tensor_us * config.row_groups * sub_tiles, chain_us * sub_tiles / config.k_groups, stage_bytes / intake});
  }
  double unit_end_us(const Fp8BlockscaleConfig& config) const {
    return unit_us + double(config.block_m() * config.block_n * 2) / store_bytes_per_us;
  }
  // The HBM floor of `active` tiles running together: tiles sharing a B column run
  // together, so they touch this much of B, and their share of A and C.
  double hbm_us(const Work& work, int64_t active) const {
    const double b_touched =
        std::min(work.b_bytes, std::ceil(double(active) / work.tiles_per_b_column) * work.b_column_bytes);
    return (b_touched + work.a_and_c_bytes * double(active) / double(work.tiles)) / hbm_bytes_per_us;
  }

  // Split-K over the last wave: the whole waves, then one run per CTA, its partial tile out
  // and the finisher pulling in the others' partial tiles (a stream-K run may also end one
  // tile and start the next, or hold a whole one between them: a unit end each). Not fitted: the partial tiles (through L2) and the
  // count handshake are priced as the cluster's split prices them.
  double tail_split_microseconds(const Work& work, const Fp8BlockscaleConfig& config,
                                 const Fp8DeviceSpec& spec) const {
    const int64_t ctas = config.ctas;
    if (ctas < 1 || work.tiles < 1 || config.dp_tiles % ctas != 0) return INFINITY;
    const double kblock = kblock_us(work, config, spec);
    const double whole_wave_us =
        std::max(double(work.kblocks) * kblock + unit_end_us(config), hbm_us(work, std::min(ctas, work.tiles)));
    const int64_t tail_tiles = work.tiles - config.dp_tiles;
    const double partial_us =
        partial_tile_us * config.row_groups * double(config.block_n / 128) * output_row_share(work, config);
    const double unit_ends = config.stream_k ? double((config.tail_kblocks - 1) / work.kblocks + 2) : 1.0;
    const double run_kblock = config.stream_k ? kblock * stream_k_kblock_factor : kblock;
    const double range_us = double(config.tail_kblocks) * run_kblock + unit_ends * unit_end_us(config) +
                            double(config.ctas_per_tile(work.kblocks)) * partial_us + split_fixed_us;
    return double(config.dp_tiles / ctas) * whole_wave_us +
           std::max(range_us, tail_hbm_us(work, config, tail_tiles, spec)) + startup_us;
  }
  // The HBM floor of the tail. Aligned ranges read each K block of a B column at about the same
  // time in all its tiles, as whole tiles do. Stream-K runs read it at different times: the
  // tail's B columns come from L2 while they fit in half of it, else once per tile from HBM
  // (measured on the H100, N=7168 K=12288 M=144: 2.1x slower than whole tiles).
  double tail_hbm_us(const Work& work, const Fp8BlockscaleConfig& config, int64_t tail_tiles,
                     const Fp8DeviceSpec& spec) const {
    if (!config.stream_k) return hbm_us(work, tail_tiles);
    const double columns = std::ceil(double(tail_tiles) / work.tiles_per_b_column) + 1.0;
    const double column_bytes = std::min(work.b_bytes, columns * work.b_column_bytes);
    const double b_read =
        column_bytes <= 0.5 * double(spec.l2_bytes) ? column_bytes : double(tail_tiles) * work.b_column_bytes;
    return (b_read + work.a_and_c_bytes * double(tail_tiles) / double(work.tiles)) / hbm_bytes_per_us;
  }
};

// Within this fraction of the cheapest configuration, the one with the fewest splits wins
// (the cluster's cost is the least certain term of the model); otherwise the cheapest.
constexpr double kFp8SplitTieBand = 0.03;

// SHAPESCOPE_FP8_SPLIT_K, SHAPESCOPE_FP8_ROW_GROUPS, SHAPESCOPE_FP8_BLOCK_N,
// SHAPESCOPE_FP8_TAIL_SPLITS and SHAPESCOPE_FP8_STREAM_K force one choice (when an instance exists for it): the knobs used to calibrate the cost model on
// a device; unset in normal runs.
inline int forced_fp8_setting(const char* name) { return forced_setting(name).value_or(0); }

// K split `split` ways over `tiles` output tiles: whole clusters, as many as are resident
// at once (0 CTAs when this split does not run on the device).
inline Fp8BlockscaleConfig with_split_over(Fp8BlockscaleConfig config, int64_t kblocks, int64_t tiles, int64_t split,
                                           const Fp8DeviceSpec& spec) {
  config.kblocks_per_split = int((kblocks + split - 1) / split);
  config.split_k = int((kblocks + config.kblocks_per_split - 1) / config.kblocks_per_split);  // no empty split
  config.ctas = int(std::min<int64_t>(tiles, spec.fitting_clusters(config.split_k)) * config.split_k);
  config.dp_tiles = 0;
  config.tail_kblocks = 0;
  config.stream_k = false;
  return config;
}

// The runs of K blocks of an unclustered tile after `waves` whole waves of tiles over every SM,
// one per CTA (stream_k: laid over the tail tiles end to end; else aligned ranges of each tile).
// nullopt where the tile does not run them, no tile remains or the runs do not fit on the SMs at once.
inline std::optional<Fp8BlockscaleConfig> with_tail_runs(Fp8BlockscaleConfig config, int64_t kblocks, int64_t tiles,
                                                         int64_t waves, int64_t run_kblocks, bool stream_k,
                                                         const Fp8DeviceSpec& spec) {
  const int64_t sms = spec.fitting_clusters(1);
  if (config.cluster_split() || !fp8_tail_split_compiled(config.row_groups) || sms < 1 || waves < 0 ||
      tiles - waves * sms < 1 || run_kblocks < 1)
    return std::nullopt;
  config.kblocks_per_split = int(kblocks);
  config.dp_tiles = int(waves * sms);
  config.tail_kblocks = int(run_kblocks);
  config.stream_k = stream_k;
  const int64_t runs = config.tail_runs(kblocks, tiles).runs();
  if (runs > sms) return std::nullopt;
  config.ctas = int(waves > 0 ? sms : runs);
  return config;
}

// Split-K over the last wave: each tile past `waves` whole waves in `splits` K ranges (as many
// as equal ranges of whole K blocks give). nullopt also where a range would hold all of K.
inline std::optional<Fp8BlockscaleConfig> with_tail_split_over(Fp8BlockscaleConfig config, int64_t kblocks,
                                                               int64_t tiles, int64_t waves, int64_t splits,
                                                               const Fp8DeviceSpec& spec) {
  if (splits < 2) return std::nullopt;
  const int64_t range = (kblocks + splits - 1) / splits;
  if ((kblocks + range - 1) / range < 2) return std::nullopt;
  return with_tail_runs(config, kblocks, tiles, waves, range, false, spec);
}

// Stream-K over the tail: runs of `run_kblocks` cut at any K block (over a whole wave and a partial
// one a run is more than a tile: it may end one tile, hold the next and start a third). nullopt
// also where the runs cut no tile or a run would hold two tiles or more.
inline std::optional<Fp8BlockscaleConfig> with_stream_k_over(Fp8BlockscaleConfig config, int64_t kblocks,
                                                             int64_t tiles, int64_t waves, int64_t run_kblocks,
                                                             const Fp8DeviceSpec& spec) {
  if (run_kblocks == kblocks || run_kblocks >= 2 * kblocks) return std::nullopt;
  return with_tail_runs(config, kblocks, tiles, waves, run_kblocks, true, spec);
}

inline Fp8BlockscaleConfig with_split(Fp8BlockscaleConfig config, const GemmShape& shape, int64_t split,
                                      const Fp8DeviceSpec& spec) {
  const GridCostModel::Work work = GridCostModel::dense_work(shape, config);
  return with_split_over(config, work.kblocks, work.tiles, split, spec);
}

// How many CTAs reduce one tile, for the tie band: none, a cluster of split_k, the last
// wave's K ranges (ranked after every cluster: the measured on-chip reduction is preferred
// to the modelled one through global memory), or stream-K runs (last: their B reads are the
// least certain term).
inline int fp8_reduction_rank(const Fp8BlockscaleConfig& config) {
  if (!config.tail_split()) return config.split_k;
  return config.stream_k ? kFp8MaxSplit + 2 : kFp8MaxSplit + 1;
}

// The choice among candidates: the cheapest, unless one with fewer splits lies within
// kFp8SplitTieBand of it. So a larger M never moves to a configuration the model prices
// above the one a smaller M ran (that one is a candidate too).
struct Fp8CostedConfig {
  Fp8BlockscaleConfig config;
  double us = 0;
};
inline const Fp8CostedConfig& cheapest_fp8_config(const std::vector<Fp8CostedConfig>& costed) {
  double cheapest = INFINITY;
  for (const Fp8CostedConfig& c : costed) cheapest = std::min(cheapest, c.us);
  const Fp8CostedConfig* best = &costed.front();
  bool found = false;
  for (const Fp8CostedConfig& c : costed) {
    if (c.us > cheapest / (1.0 - kFp8SplitTieBand)) continue;
    const int rank = fp8_reduction_rank(c.config), best_rank = fp8_reduction_rank(best->config);
    if (!found || rank < best_rank || (rank == best_rank && c.us < best->us))
      best = &c;
    found = true;
  }
  return *best;
}

// Where every CTA's one unit of whole tiles fits in the ring (K at most its stages of 128), its
// weights load while the previous grid ends (measured on the H100, 2026-11-25, DeepSeek-V3 TP8
// decode, graph timing with PDL: kv_b K=512 -14%, the K=256 down projections -18%). The model
// does not price it: it leaves the choice as it was.
inline Fp8BlockscaleConfig with_weights_ahead(Fp8BlockscaleConfig config, int64_t kblocks) {
  config.weights_ahead = fp8_weights_ahead_compiled(config.row_groups, config.cluster_split()) &&
                         !config.tail_split() && kblocks <= config.stages();
  return config;
}

// The choice under `model` (bench/cost_model_fit tries refitted constants through it).
inline Fp8BlockscaleConfig choose_fp8_blockscale_config(const GemmShape& shape, const Fp8DeviceSpec& spec,
                                                        const GridCostModel& model) {
  // Candidates: every compiled instance (64-row streaming tiles only at decode sizes), each
  // with every split it runs that the device holds.
  const int forced_rows = forced_fp8_setting("SHAPESCOPE_FP8_ROW_GROUPS");
  const int forced_n = forced_fp8_setting("SHAPESCOPE_FP8_BLOCK_N");
  const int forced_split = forced_fp8_setting("SHAPESCOPE_FP8_SPLIT_K");
  // SHAPESCOPE_FP8_TAIL_SPLITS: 1 runs no split over the last wave, 2.. forces one.
  const int forced_tail_splits = forced_fp8_setting("SHAPESCOPE_FP8_TAIL_SPLITS");
  // SHAPESCOPE_FP8_STREAM_K: 1 forces stream-K over the last partial wave, 2 over the last whole
  // wave and the partial one, each in the shortest runs that fit on the SMs.
  const int forced_stream_k = forced_fp8_setting("SHAPESCOPE_FP8_STREAM_K");
  const bool stream_k_forced = forced_stream_k > 0 && forced_tail_splits != 1;
  const bool tail_forced = forced_tail_splits > 1 || stream_k_forced;
  const bool forced_tile = forced_rows > 0 || forced_n > 0;
  const int64_t kblocks = (shape.k + kFp8BlockK - 1) / kFp8BlockK;
  std::vector<Fp8CostedConfig> costed;
  for (const Fp8Instance& instance : kFp8Instances) {
    const bool wanted = forced_tile ? instance.row_groups == std::max(forced_rows, 1) &&
                                          instance.block_n == (forced_n > 0 ? forced_n : 128)
                                    : shape.m > kFp8SmallMLimit || instance.row_groups == 1;
    if (!wanted) continue;
    const Fp8BlockscaleConfig tile{instance.row_groups, instance.k_groups, instance.block_n};
    const int64_t first_split = instance.cluster_split ? 2 : 1;
    const int64_t last_split = instance.cluster_split ? std::min<int64_t>(kblocks, kFp8MaxSplit) : 1;
    for (int64_t split = first_split; split <= last_split && !tail_forced; ++split) {
      if (forced_split > 0 && split != std::min<int64_t>(forced_split, kblocks)) continue;
      const Fp8BlockscaleConfig candidate = with_split(tile, shape, split, spec);
      if (candidate.split_k != split) continue;  // each split once
      if (candidate.ctas < 1 || !fp8_fits_device(candidate, spec)) continue;
      costed.push_back({candidate, model.microseconds(shape, candidate, candidate.split_k, spec)});
    }
    if (instance.cluster_split || forced_split > 0 || forced_tail_splits == 1 || !fp8_fits_device(tile, spec)) continue;
    // Split-K over the last partial wave, or over the last whole one and the partial one,
    // in every number of K ranges that fits on the SMs (the model weighs the partial tiles
    // each range costs). Forced: the last partial wave in the forced number of ranges, or
    // the most that fit.
    const GridCostModel::Work work = GridCostModel::dense_work(shape, tile);
    const int64_t sms = spec.fitting_clusters(1);
    const int64_t full_waves = sms > 0 ? work.tiles / sms : 0;
    for (int64_t waves = full_waves; waves >= std::max<int64_t>(full_waves - 1, 0); --waves) {
      const int64_t tail_tiles = work.tiles - waves * sms;
      const int64_t last_partial = work.tiles % sms != 0 ? full_waves : full_waves - 1;
      if (tail_tiles < 1 || (tail_forced && waves != (stream_k_forced ? last_partial + 1 - forced_stream_k
                                                                        : last_partial)))
        continue;
      const auto add = [&](const std::optional<Fp8BlockscaleConfig>& candidate) {
        if (!candidate) return false;
        const bool seen = std::any_of(costed.begin(), costed.end(), [&](const Fp8CostedConfig& c) {
          return c.config.tail_kblocks == candidate->tail_kblocks && c.config.dp_tiles == candidate->dp_tiles &&
                 c.config.stream_k == candidate->stream_k &&
                 fp8_instance_index(c.config) == fp8_instance_index(*candidate);
        });
        if (!seen) costed.push_back({*candidate, model.microseconds(work, *candidate, 1, spec)});
        return true;
      };
      const int64_t most = std::min(kblocks, sms / tail_tiles);
      for (int64_t splits = tail_forced ? std::min<int64_t>(forced_tail_splits, most) : 2;
           splits <= most && !stream_k_forced; ++splits) {
        if (add(with_tail_split_over(tile, kblocks, work.tiles, waves, splits, spec)) && tail_forced) break;
      }
      // Stream-K in every run length from the shortest that fits on the SMs to one K block short
      // of two tiles (forced: the shortest); runs that divide a tile are the aligned ranges above.
      if (forced_tail_splits > 1) continue;
      for (int64_t run = (tail_tiles * kblocks + sms - 1) / sms; run < 2 * kblocks; ++run) {
        if (kblocks % run == 0 && !stream_k_forced) continue;
        if (add(with_stream_k_over(tile, kblocks, work.tiles, waves, run, spec)) && stream_k_forced) break;
      }
    }
  }
  if (costed.empty() && (forced_tile || forced_split > 0 || tail_forced))
    throw UserError("fp8_blockscale: no compiled instance for the forced SHAPESCOPE_FP8_* settings at M=" +
                    std::to_string(shape.m) + " on " + spec.name + "; unset them or force a tile from kFp8Instances");
  if (costed.empty())
    throw UserError("fp8_blockscale: no compiled instance fits " + spec.name + " (" +
                    std::to_string(spec.shared_bytes_per_block_optin) + " bytes of shared memory per block) at M=" +
                    std::to_string(shape.m) + "; pick another kernel");
  return with_weights_ahead(cheapest_fp8_config(costed).config, kblocks);
}

inline Fp8BlockscaleConfig choose_fp8_blockscale_config(const GemmShape& shape, const Fp8DeviceSpec& spec) {
  return choose_fp8_blockscale_config(shape, spec, GridCostModel{});
}

inline std::string describe(const Fp8BlockscaleConfig& config) {
  return "ws_m" + std::to_string(config.block_m()) + "n" + std::to_string(config.block_n) + "k128_kgroups" +
         std::to_string(config.k_groups) + "_s" + std::to_string(config.stages()) + "_splitk" +
         std::to_string(config.split_k) + "_grid" + std::to_string(config.ctas) +
         (config.tail_split() ? "_tailk" + std::to_string(config.tail_kblocks) + "_dp" + std::to_string(config.dp_tiles)
                              : "") +
         (config.stream_k ? "_streamk" : "") +
         (config.weights_ahead ? "_weightsahead" : "");
}

// The configuration a name written by describe() holds, found anywhere in `text` (a profile's
// kernel_name, "fp8_blockscale/ws_m64n128k128_kgroups2_s6_splitk1_grid132+pdl", or with
// "_tailk8_dp0", "_tailk8_dp0_streamk" and/or "_weightsahead" after the grid); nullopt when it holds none. kblocks_per_split is not in
// the name and stays 1.
inline std::optional<Fp8BlockscaleConfig> parse_fp8_config_name(const std::string& text) {
  const std::size_t at = text.find("ws_m");
  if (at == std::string::npos) return std::nullopt;
  int block_m = 0, block_k = 0, stages = 0;
  Fp8BlockscaleConfig config;
  if (std::sscanf(text.c_str() + at, "ws_m%dn%dk%d_kgroups%d_s%d_splitk%d_grid%d", &block_m, &config.block_n,
                  &block_k, &config.k_groups, &stages, &config.split_k, &config.ctas) != 7 ||
      block_m % 64 != 0 || block_m < 64 || block_k != kFp8BlockK)
    return std::nullopt;
  config.row_groups = block_m / 64;
  const std::size_t tail = text.find("_tailk", at);
  if (tail != std::string::npos &&
      std::sscanf(text.c_str() + tail, "_tailk%d_dp%d", &config.tail_kblocks, &config.dp_tiles) != 2)
    return std::nullopt;
  config.stream_k = text.find("_streamk", at) != std::string::npos;
  config.weights_ahead = text.find("_weightsahead", at) != std::string::npos;
  return config;
}

}  // namespace shapescope::kernels::cuda
