#include "analyze/analysis.hpp"

#include <algorithm>

namespace shapescope::analyze {

SeriesAnalysis analyze_series(const Series& series, const AnalysisOptions& options, const MWeights& weights) {
  SeriesAnalysis analysis;
  analysis.series = &series;
  const std::vector<Anomaly> anomalies = find_anomalies(series, options.rule, options.rule_options);
  analysis.findings.reserve(anomalies.size());
  for (const Anomaly& anomaly : anomalies) analysis.findings.push_back({anomaly, {}, std::nullopt});

  if (options.check_split && !anomalies.empty()) {
    int64_t largest = 0;
    for (const Anomaly& anomaly : anomalies) largest = std::max(largest, anomaly.m);
    const SplitSearch search(series, options.split, largest);
    for (Finding& finding : analysis.findings) {
      finding.plans = search.plans_for(finding.anomaly.index);
      finding.best = finding.plans.best(options.split.split_ratio);
    }
  }

  Recoverable& recoverable = analysis.recoverable;
  recoverable.weighted = !weights.uniform();
  for (const SeriesPoint& point : series.points) recoverable.sweep_us += weights.weight(point.m) * point.time_us;
  for (const Finding& finding : analysis.findings) {
    if (finding.best) {
      recoverable.recoverable_us +=
          weights.weight(finding.anomaly.m) * (finding.anomaly.time_us - finding.best->predicted_us);
    }
  }
  return analysis;
}

}  // namespace shapescope::analyze
