#include "analyze/rule_sensitivity.hpp"

#include <set>

namespace shapescope::analyze {

void SensitivityTally::add(const SyntheticSweep& sweep, const std::vector<int64_t>& flagged_ms) {
  const std::set<int64_t> flagged(flagged_ms.begin(), flagged_ms.end());
  const auto& points = sweep.series.points;
  const auto is_flagged = [&](std::size_t i) { return i < points.size() && flagged.count(points[i].m) > 0; };

  std::vector<bool> touched(points.size(), false);
  for (const InjectedCliff& cliff : sweep.cliffs) {
    for (std::size_t i = cliff.first_touched; i <= cliff.last_touched && i < points.size(); ++i) touched[i] = true;
    bool found = is_flagged(cliff.first);
    if (cliff.kind != CliffKind::single_batch) {
      found = found || is_flagged(cliff.first - 1) || is_flagged(cliff.first + 1);
    }
    DetectionCount& count = detection[{cliff.kind, cliff.depth}];
    count.found += found;
    ++count.injected;
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (touched[i]) continue;
    ++untouched_batches;
    false_alarms += is_flagged(i);
  }
}

}  // namespace shapescope::analyze
