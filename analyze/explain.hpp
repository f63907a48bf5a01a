// Why is this M slow? Each anomaly gets the causes its data supports, each with
// the evidence, so a reviewer can check the claim:
//  - kernel switch: the library ran a different kernel here than at the
//    reference (the best smaller M the rule compared against; a new launch grid
//    alone is none), and at least half of the drop is there where that kernel
//    took over and at the next M where it runs on;
//  - wave quantization: the output tiles ⌈M/tm⌉·⌈N/tn⌉ (× the batch) fill the
//    waves of SMs worse here than at the reference, or hold less output (a tile
//    row just begun is mostly padding), by enough to account for at least half
//    the MFU drop (the evidence says when a wave boundary falls just below this
//    M); tile and split-K from the profile's columns (the kernel name for profiles
//    without them), SMs from the series (sidecar, AITER cu_num) or the device table;
//  - noise: the drop lies within the measured spread of the two points
//    (stddev or ci95 columns): the anomaly may not reproduce;
//  - throttling: the point was measured off the steady SM clock, or at an SM clock
//    lower than the reference's by enough to account for at least half the drop;
//  - power cap: the board's power policy held the SM clock down for a larger share of the point's time
//    than of the reference's (NVML's violation counter, profile column power_capped_pct), by enough
//    that the extra capped time, run at half speed, accounts for at least half the drop;
//  - expert rows (grouped GEMMs): the kernel did more work per token than at the reference, by enough to
//    account for at least half the drop: fewer of the rows it computed held a token (the routing put fewer
//    tokens on this GPU's experts for the same tiles), or its busiest expert needs more tile rows, which the
//    kernel's CTAs for that expert run one after another (profile columns useful_rows, executed_rows, rows_max);
//  - fewer flops per byte: both points lie below the device's ridge point (peak FLOP/s over memory bandwidth),
//    where the roofline bounds time by bytes, and this M does fewer flops per byte it must move (profile column
//    gbytes_per_s: the fewest bytes over the time) by enough to account for at least half the drop (a grouped
//    GEMM whose routing put fewer tokens on the same experts' weights);
//  - transient slowdown: the same kernel at a neighbouring measured M (within
//    kNeighbourSpan) ran, in its slowest sample, at least half of this M's drop
//    slower than its median: the GPU slowed for a moment of the sweep (a power-capped
//    board does, between the clock readings), not for this M;
//  - with hardware counters of both points (`profile --counters`): an extra kernel,
//    DRAM traffic, idle SMs, an occupancy drop (analyze/counter_evidence.hpp).
// An anomaly with none of these says so.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyze/anomaly.hpp"
#include "analyze/series.hpp"
#include "common/kernel_counters.hpp"

namespace shapescope::analyze {

// How far past an M, relative to M, the next measured M may lie and still show how its kernel runs here.
constexpr double kNeighbourSpan = 0.125;

enum class CauseKind {
  kernel_switch,
  wave_quantization,
  noise,
  throttling,
  power_cap,       // held at the board's power limit for more of its time than the reference
  expert_rows,     // grouped: more rows computed per token, or more tile rows for the busiest expert
  intensity,       // bound by memory, with fewer flops per byte than the reference
  transient,       // the same kernel at the M beside it swung by as much between its own samples
  extra_kernel,    // counters: the run launched a kernel the reference's did not
  dram_traffic,    // counters: more DRAM bytes per minimum byte than at the reference
  idle_sms,        // counters: SMs idle a larger share of the time (a tail)
  occupancy_drop,  // counters: fewer warps resident
};
std::string to_string(CauseKind kind);

struct Cause {
  CauseKind kind = CauseKind::kernel_switch;
  std::string evidence;  // one line with the numbers behind the claim
};

struct Explanation {
  int64_t m = 0;
  int64_t reference_m = 0;
  std::vector<Cause> causes;
  std::vector<std::string> ruled_out;  // why each other cause does not apply ("no kernel names recorded", …)
  bool explained() const { return !causes.empty(); }
  // "kernel switch: …; wave quantization: …", or "no supported cause: " and what ruled each out.
  std::string summary() const;
};

// The kernel a launch ran, without what only the launch chose: shapescope's own kernels name their grid
// ("…_grid112") and programmatic dependent launch ("+pdl"), which change from M to M while the kernel stays.
std::string launched_kernel(const std::string& kernel_name);

// Parses vendor kernel names: cuBLAS/CUTLASS "…_128x64_…", read transposed where the name is in cuBLAS's
// column-major terms (R x C rows x columns of its D, our N x M): shapescope's cuBLASLt description
// "cublasLt algo=… tile=RxC …" and cuBLAS's kernels marked with its operand layout ("…_256x128_…_nn");
// cuBLAS's xmma "…_tilesize160x128x32_…" (rows of M first), CK "…_256x128x128x128_…"
// (block size, then M×N×K per block), CK-tile "…_cktile_32x128x128_…", AITER asm
// "…_BpreShuffle_96x128E", CUTLASS-style tokens as in shapescope's own "…/ws_m128n256k128_…". nullopt when the name carries no tile.
std::optional<TileShape> tile_from_kernel_name(const std::string& kernel_name);

// How one M's output tiles ⌈M/tm⌉·⌈N/tn⌉ (× the batch, each tile split along K into split_k CTAs) fill the
// waves of `sms` SMs.
struct Waves {
  int64_t tiles = 0;
  int64_t ctas = 0;       // tiles × split-K
  int64_t waves = 0;
  double efficiency = 0;  // CTAs / (waves × SMs): how full the waves are
  // M·N·batch over the area of the waves' CTA slots: the waves' fill times the part of the last tile row and
  // column that holds output (a tile row 1 of 64 rows full uses 1/64 of it).
  double area_used = 0;
};
Waves waves_of(int64_t m, int64_t n, TileShape tile, int sms, int64_t batch = 1, int64_t split_k = 1);

// SM / CU count: the series' own, else the device table's; 0 when unknown.
int multiprocessor_count(const Series& series);

// Counters by M, from the profile's counters file; null: explain from the profile alone.
using CountersByM = std::map<int64_t, KernelCounters>;

Explanation explain_anomaly(const Series& series, const Anomaly& anomaly, const CountersByM* counters = nullptr);
std::vector<Explanation> explain_anomalies(const Series& series, const std::vector<Anomaly>& anomalies,
                                           const CountersByM* counters = nullptr);

}  // namespace shapescope::analyze
