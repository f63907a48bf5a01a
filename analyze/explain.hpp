// Why is this M slow? Each anomaly gets the causes its data supports, each with
// the evidence, so a reviewer can check the claim:
//  - kernel switch: the library ran a different kernel here than at the
//    reference (the best smaller M the rule compared against);
//  - wave quantization: the output tiles ⌈M/tm⌉·⌈N/tn⌉ fill the waves of SMs
//    worse here than at the reference, by enough to account for at least half
//    the MFU drop (the evidence says when a wave boundary falls just below this
//    M); tile and split-K from the profile's columns (the kernel name for profiles
//    without them), SMs from the series (sidecar, AITER cu_num) or the device table;
//  - noise: the drop lies within the measured spread of the two points
//    (stddev or ci95 columns): the anomaly may not reproduce;
//  - throttling: the point was measured off the steady SM clock;
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

enum class CauseKind {
  kernel_switch,
  wave_quantization,
  noise,
  throttling,
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

// Parses vendor kernel names: cuBLAS/CUTLASS "…_128x64_…", shapescope's cuBLASLt description
// "cublasLt algo=… tile=RxC …" (R x C are rows x columns of cuBLASLt's D, our N x M, so read
// transposed), CK "…_256x128x128x128_…"
// (block size, then M×N×K per block), CK-tile "…_cktile_32x128x128_…", AITER asm
// "…_BpreShuffle_96x128E". nullopt when the name carries no tile.
std::optional<TileShape> tile_from_kernel_name(const std::string& kernel_name);

// SM / CU count: the series' own, else the device table's; 0 when unknown.
int multiprocessor_count(const Series& series);

// Counters by M, from the profile's counters file; null: explain from the profile alone.
using CountersByM = std::map<int64_t, KernelCounters>;

Explanation explain_anomaly(const Series& series, const Anomaly& anomaly, const CountersByM* counters = nullptr);
std::vector<Explanation> explain_anomalies(const Series& series, const std::vector<Anomaly>& anomalies,
                                           const CountersByM* counters = nullptr);

}  // namespace shapescope::analyze
