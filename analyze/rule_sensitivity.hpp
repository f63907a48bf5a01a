// Scoring an anomaly rule against a synthetic sweep's ground truth
// (analyze/synthetic_sweep.hpp); the benchmark and the tests count the same way.
//
// Found: a single-batch cliff when its own M is flagged (a flag on a shoulder
// does not count); a multi-batch or kernel-switch cliff when its first M, or the
// batch before or after it, is flagged (the onset within ±1 batch).
// False alarm: a flag at an M with no injected change, i.e. outside every cliff's
// touched batches (a single-batch cliff touches its ±3 shoulders; a multi-batch
// or kernel-switch cliff its batches and one on either side). Reported per 1000
// of those untouched batches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "analyze/synthetic_sweep.hpp"

namespace shapescope::analyze {

struct DetectionCount {
  std::size_t found = 0;
  std::size_t injected = 0;
  double rate() const { return injected ? static_cast<double>(found) / static_cast<double>(injected) : 0; }
};

struct SensitivityTally {
  std::map<std::pair<CliffKind, double>, DetectionCount> detection;  // by (kind, depth)
  std::size_t false_alarms = 0;
  std::size_t untouched_batches = 0;
  double false_alarms_per_1000() const {
    return untouched_batches ? 1000.0 * static_cast<double>(false_alarms) / static_cast<double>(untouched_batches) : 0;
  }
  // Adds what `flagged_ms` (the rule's anomalies on sweep.series) found and mistook.
  void add(const SyntheticSweep& sweep, const std::vector<int64_t>& flagged_ms);
};

}  // namespace shapescope::analyze
