// The machine-readable report: every series with its anomalies (the best
// smaller M and its MFU, the drop), plans a–d and the best one, recoverable
// time, and the compare tables. `profile --verify-plans` reads the plans back:
// series[].anomalies[] { m, time_us, best_plan { kind, parts[], predicted_us, gain_pct } }.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"

namespace shapescope::analyze {

nlohmann::json plan_json(const SplitPlan& plan);
nlohmann::json series_json(const SeriesAnalysis& analysis);
nlohmann::json compare_json(const CompareResult& result);
nlohmann::json analysis_options_json(const AnalysisOptions& options);

}  // namespace shapescope::analyze
