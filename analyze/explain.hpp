// Why is this M slow? Each anomaly gets the causes its data supports, each with
// the evidence, so a reviewer can check the claim:
//  - kernel switch: the library ran a different kernel here than at the
//    reference (the best smaller M the rule compared against);
//  - wave quantization: the output tiles ⌈M/tm⌉·⌈N/tn⌉ fill the waves of SMs
//    worse here than at the reference, by enough to account for at least half
//    the MFU drop (the evidence says when a wave boundary falls just below this
//    M); tile from the kernel name, SMs from the series (sidecar, AITER cu_num)
//    or the device table;
//  - noise: the drop lies within the measured spread of the two points
//    (stddev or ci95 columns): the anomaly may not reproduce;
//  - throttling: the point was measured off the steady SM clock.
// An anomaly with none of these says so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/anomaly.hpp"
#include "analyze/series.hpp"

namespace shapescope::analyze {

enum class CauseKind { kernel_switch, wave_quantization, noise, throttling };
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

// The output tile (rows of M, columns of N) a kernel computes per CTA / workgroup.
struct TileShape {
  int64_t m = 0, n = 0;
  bool operator==(const TileShape&) const = default;
};

// Parses vendor kernel names: cuBLAS/CUTLASS "…_128x64_…", CK "…_256x128x128x128_…"
// (block size, then M×N×K per block), CK-tile "…_cktile_32x128x128_…", AITER asm
// "…_BpreShuffle_96x128E". nullopt when the name carries no tile.
std::optional<TileShape> tile_from_kernel_name(const std::string& kernel_name);

// SM / CU count: the series' own, else the device table's; 0 when unknown.
int multiprocessor_count(const Series& series);

Explanation explain_anomaly(const Series& series, const Anomaly& anomaly);
std::vector<Explanation> explain_anomalies(const Series& series, const std::vector<Anomaly>& anomalies);

}  // namespace shapescope::analyze
