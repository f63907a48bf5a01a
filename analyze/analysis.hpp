// One series through the rule and the split search: its anomalies, their
// plans, and how much time the plans would recover.
#pragma once

#include <optional>
#include <vector>

#include "analyze/anomaly.hpp"
#include "analyze/m_weights.hpp"
#include "analyze/series.hpp"
#include "analyze/split_search.hpp"

namespace shapescope::analyze {

struct AnalysisOptions {
  AnomalyRule rule = AnomalyRule::noise_aware;  // the CLI's default too (docs/anomaly_rules.md)
  RuleOptions rule_options;
  bool check_split = false;  // search plans a–d for each anomaly
  SplitOptions split;
};

struct Finding {
  Anomaly anomaly;
  PlanSet plans;                    // empty unless check_split
  std::optional<SplitPlan> best;
};

struct Recoverable {
  double recoverable_us = 0;  // sum over anomalies with a plan of weight × (time − predicted)
  double sweep_us = 0;        // sum over all points of weight × time
  bool weighted = false;      // by an M histogram, else uniform over the sweep
  double fraction() const { return sweep_us > 0 ? recoverable_us / sweep_us : 0.0; }
};

struct SeriesAnalysis {
  const Series* series = nullptr;  // the analyzed series; must outlive this
  std::vector<Finding> findings;
  Recoverable recoverable;
};

SeriesAnalysis analyze_series(const Series& series, const AnalysisOptions& options, const MWeights& weights);

}  // namespace shapescope::analyze
