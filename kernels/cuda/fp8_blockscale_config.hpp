// The per-shape heuristic of our block-scaled FP8 GEMMs (fp8_blockscale and
// fp8_blockscale_bpreshuffle), kept apart from the kernel bodies.
//
// One kernel family covers every M: a persistent grid of one CTA per SM, work units
// of a 64-, 128- or 192-row tile of A by a 128- or 256-column tile of B, 128-wide K
// blocks, as deep a shared-memory ring as fits. Small M (decode) is weight-streaming:
// 64-row units, two math warpgroups on alternate K blocks, and split-K across the CTAs
// of a cluster where too few tiles would leave SMs idle. Larger M picks the tile shape
// and split a small cost model of the grid prefers. Everything device-dependent comes
// from an Fp8DeviceSpec (fp8_blockscale_device_spec.hpp).
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
#include "kernels/cuda/fp8_blockscale_device_spec.hpp"
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

  int block_m() const { return row_groups * 64; }
  bool cluster_split() const { return split_k > 1; }
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
    const int64_t per_split = (work.kblocks + split - 1) / split;
    const int64_t used_splits = (work.kblocks + per_split - 1) / per_split;
    const int64_t fitting = spec.fitting_clusters(used_splits);
    if (fitting < 1 || work.tiles < 1) return INFINITY;  // this split does not run on the device
    const int64_t clusters = std::min(work.tiles, fitting);
    const int64_t rounds = (work.tiles + clusters - 1) / clusters;
    const double stage_bytes = (work.a_rows + config.block_n) * kFp8BlockK;
    const double sub_tiles = double(config.block_n / 128);
    const double intake =
        intake_bytes_per_us(config) * (2 * work.a_bytes > double(spec.l2_bytes) ? intake_with_a_beyond_l2 : 1.0);
    const double kblock_us = std::max(
        {tensor_us * config.row_groups * sub_tiles, chain_us * sub_tiles / config.k_groups, stage_bytes / intake});
    const double unit_end_us = unit_us + double(config.block_m() * config.block_n * 2) / store_bytes_per_us;
    const double unit_us_total = double(per_split) * kblock_us + unit_end_us;
    // A round of `active` clusters: tiles sharing a B column run together, so it touches this much of B.
    const auto round_us = [&](int64_t active) {
      const double b_touched =
          std::min(work.b_bytes, std::ceil(double(active) / work.tiles_per_b_column) * work.b_column_bytes);
      const double bytes = b_touched + work.a_and_c_bytes * double(active) / double(work.tiles);
      return std::max(unit_us_total, bytes / hbm_bytes_per_us);
    };
    const int64_t last_round = work.tiles % clusters;
    double total = double(work.tiles / clusters) * round_us(clusters) + (last_round ? round_us(last_round) : 0.0) +
                   startup_us;
    if (used_splits > 1)
      total += split_fixed_us + double(rounds * (used_splits - 1) * config.row_groups) * partial_tile_us;
    return total;
  }
};

// Within this fraction of the cheapest configuration, the one with the fewest splits wins
// (the cluster's cost is the least certain term of the model); otherwise the cheapest.
constexpr double kFp8SplitTieBand = 0.03;

// SHAPESCOPE_FP8_SPLIT_K, SHAPESCOPE_FP8_ROW_GROUPS and SHAPESCOPE_FP8_BLOCK_N force one
// choice (when an instance exists for it): the knobs used to calibrate the cost model on
// a device; unset in normal runs.
inline int forced_fp8_setting(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::max(0, std::atoi(value)) : 0;
}

// K split `split` ways over `tiles` output tiles: whole clusters, as many as are resident
// at once (0 CTAs when this split does not run on the device).
inline Fp8BlockscaleConfig with_split_over(Fp8BlockscaleConfig config, int64_t kblocks, int64_t tiles, int64_t split,
                                           const Fp8DeviceSpec& spec) {
  config.kblocks_per_split = int((kblocks + split - 1) / split);
  config.split_k = int((kblocks + config.kblocks_per_split - 1) / config.kblocks_per_split);  // no empty split
  config.ctas = int(std::min<int64_t>(tiles, spec.fitting_clusters(config.split_k)) * config.split_k);
  return config;
}

inline Fp8BlockscaleConfig with_split(Fp8BlockscaleConfig config, const GemmShape& shape, int64_t split,
                                      const Fp8DeviceSpec& spec) {
  const GridCostModel::Work work = GridCostModel::dense_work(shape, config);
  return with_split_over(config, work.kblocks, work.tiles, split, spec);
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
    if (!found || c.config.split_k < best->config.split_k ||
        (c.config.split_k == best->config.split_k && c.us < best->us))
      best = &c;
    found = true;
  }
  return *best;
}

// The choice under `model` (bench/cost_model_fit tries refitted constants through it).
inline Fp8BlockscaleConfig choose_fp8_blockscale_config(const GemmShape& shape, const Fp8DeviceSpec& spec,
                                                        const GridCostModel& model) {
  // Candidates: every compiled instance (64-row streaming tiles only at decode sizes), each
  // with every split it runs that the device holds.
  const int forced_rows = forced_fp8_setting("SHAPESCOPE_FP8_ROW_GROUPS");
  const int forced_n = forced_fp8_setting("SHAPESCOPE_FP8_BLOCK_N");
  const int forced_split = forced_fp8_setting("SHAPESCOPE_FP8_SPLIT_K");
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
    for (int64_t split = first_split; split <= last_split; ++split) {
      if (forced_split > 0 && split != std::min<int64_t>(forced_split, kblocks)) continue;
      const Fp8BlockscaleConfig candidate = with_split(tile, shape, split, spec);
      if (candidate.split_k != split) continue;  // each split once
      if (candidate.ctas < 1 || !fp8_fits_device(candidate, spec)) continue;
      costed.push_back({candidate, model.microseconds(shape, candidate, candidate.split_k, spec)});
    }
  }
  if (costed.empty() && (forced_tile || forced_split > 0))
    throw UserError("fp8_blockscale: no compiled instance for the forced SHAPESCOPE_FP8_* settings at M=" +
                    std::to_string(shape.m) + " on " + spec.name + "; unset them or force a tile from kFp8Instances");
  if (costed.empty())
    throw UserError("fp8_blockscale: no compiled instance fits " + spec.name + " (" +
                    std::to_string(spec.shared_bytes_per_block_optin) + " bytes of shared memory per block) at M=" +
                    std::to_string(shape.m) + "; pick another kernel");
  return cheapest_fp8_config(costed).config;
}

inline Fp8BlockscaleConfig choose_fp8_blockscale_config(const GemmShape& shape, const Fp8DeviceSpec& spec) {
  return choose_fp8_blockscale_config(shape, spec, GridCostModel{});
}

inline std::string describe(const Fp8BlockscaleConfig& config) {
  return "ws_m" + std::to_string(config.block_m()) + "n" + std::to_string(config.block_n) + "k128_kgroups" +
         std::to_string(config.k_groups) + "_s" + std::to_string(config.stages()) + "_splitk" +
         std::to_string(config.split_k) + "_grid" + std::to_string(config.ctas);
}

// The configuration a name written by describe() holds, found anywhere in `text` (a profile's
// kernel_name, "fp8_blockscale/ws_m64n128k128_kgroups2_s6_splitk1_grid132+pdl"); nullopt when
// it holds none. kblocks_per_split is not in the name and stays 1.
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
  return config;
}

}  // namespace shapescope::kernels::cuda
