#include "analyze/rule_sensitivity.hpp"

#include <set>

namespace shapescope::analyze {

const std::vector<CliffKind>& benchmark_cliff_kinds() {
  static const std::vector<CliffKind> kinds = {CliffKind::single_batch, CliffKind::multi_batch,
                                               CliffKind::kernel_switch};
  return kinds;
}

const std::vector<double>& benchmark_cliff_depths() {
  static const std::vector<double> depths = {0.15, 0.2, 0.3, 0.4, 0.5};
  return depths;
}

std::vector<CliffRequest> benchmark_cliffs() {
  std::vector<CliffRequest> cliffs;
  for (const CliffKind kind : benchmark_cliff_kinds()) {
    for (const double depth : benchmark_cliff_depths()) cliffs.push_back({kind, depth});
  }
  return cliffs;
}

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
    cliffs.push_back({cliff.kind, cliff.depth, sweep.scatter.at(cliff.first), found});
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (touched[i]) continue;
    ++untouched_batches;
    false_alarms += is_flagged(i);
  }
}

DetectionCount SensitivityTally::detection(CliffKind kind, double depth, double scatter_low,
                                           double scatter_high) const {
  DetectionCount count;
  for (const ScoredCliff& cliff : cliffs) {
    if (cliff.kind != kind || cliff.depth != depth || cliff.scatter < scatter_low || cliff.scatter > scatter_high) {
      continue;
    }
    ++count.injected;
    count.found += cliff.found;
  }
  return count;
}

}  // namespace shapescope::analyze
