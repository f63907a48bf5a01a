// Split plans as analyze --json writes them and profile --verify-plans reads them
// back: the one writer of a plan's JSON and the one reader of a report's plans.
// Report layout (times in µs):
//   {"series": [{"name": …, "kernel": …, "n": …, "k": …, "batch_count": …,
//                "anomalies": [{"m": …, "time_us": …,
//                               "best_plan": {"kind": …, "parts": [m1, m2, …],
//                                             "predicted_us": …, "gain_pct": …}}]}]}
// ("best_plan" is null when no plan beat the bar).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace shapescope {

struct PlanRecord {
  std::string kind;  // study_pair | halves | k_way | pad_up
  std::vector<int64_t> parts;
  double predicted_us = 0;
  double gain = 0;   // fraction of the measured time saved
};

nlohmann::json plan_record_json(const PlanRecord& plan);
// Throws nlohmann::json::exception when a field is missing or mistyped.
PlanRecord plan_record_from_json(const nlohmann::json& object);

// A best plan as a report states it, with its series and anomaly.
struct ReportedPlan {
  std::string series, kernel, kind;
  int64_t n = 0, k = 0, batch_count = 1;
  int64_t m = 0;
  std::vector<int64_t> parts;
  double reported_time_us = 0, reported_predicted_us = 0, reported_gain_pct = 0;
};

// Every anomaly's best plan in the report at `report_path`, at most `max_per_series` per series (largest gain
// first). Throws UserError naming the file and the fix when it is not an analyzer report.
std::vector<ReportedPlan> read_reported_plans(const std::string& report_path, int max_per_series);

}  // namespace shapescope
