#include "common/plan_report.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UserError(fmt::format("{}: cannot open; pass the JSON report analyze --json wrote", path));
  std::stringstream text;
  text << file.rdbuf();
  try {
    return json::parse(text.str());
  } catch (const json::exception& error) {  // parse_error, or out_of_range for a number past a double
    throw UserError(fmt::format("{}: not JSON ({}); pass the JSON report analyze wrote", path, error.what()));
  }
}

template <typename Value>
Value field(const json& object, const char* key, Value fallback) {
  return object.contains(key) && !object[key].is_null() ? object[key].get<Value>() : fallback;
}

}  // namespace

json plan_record_json(const PlanRecord& plan) {
  return {{"kind", plan.kind},
          {"parts", plan.parts},
          {"predicted_us", plan.predicted_us},
          {"gain_pct", 100 * plan.gain}};
}

PlanRecord plan_record_from_json(const json& object) {
  PlanRecord plan;
  plan.kind = field<std::string>(object, "kind", "");
  plan.parts = object.at("parts").get<std::vector<int64_t>>();
  plan.predicted_us = field<double>(object, "predicted_us", 0);
  plan.gain = field<double>(object, "gain_pct", 0) / 100;
  return plan;
}

std::vector<ReportedPlan> read_reported_plans(const std::string& report_path, int max_per_series) {
  const json root = read_json(report_path);
  if (!root.is_object() || !root.contains("series") || !root["series"].is_array())
    throw UserError(fmt::format("{}: no \"series\" array; pass the JSON report analyze wrote", report_path));
  std::vector<ReportedPlan> plans;
  try {
    for (const json& series : root["series"]) {
      std::vector<ReportedPlan> of_series;
      for (const json& anomaly : series.value("anomalies", json::array())) {
        if (!anomaly.contains("best_plan") || anomaly["best_plan"].is_null()) continue;
        const PlanRecord best = plan_record_from_json(anomaly["best_plan"]);
        ReportedPlan reported;
        reported.series = field<std::string>(series, "name", "");
        reported.kernel = field<std::string>(series, "kernel", "");
        reported.n = field<int64_t>(series, "n", 0);
        reported.k = field<int64_t>(series, "k", 0);
        reported.batch_count = std::max<int64_t>(1, field<int64_t>(series, "batch_count", 1));
        reported.m = anomaly.at("m").get<int64_t>();
        reported.reported_time_us = field<double>(anomaly, "time_us", 0);
        reported.kind = best.kind;
        reported.parts = best.parts;
        reported.reported_predicted_us = best.predicted_us;
        reported.reported_gain_pct = 100 * best.gain;
        of_series.push_back(reported);
      }
      std::stable_sort(of_series.begin(), of_series.end(),
                       [](const ReportedPlan& a, const ReportedPlan& b) {
                         return a.reported_gain_pct > b.reported_gain_pct;
                       });
      if (int(of_series.size()) > max_per_series) of_series.resize(std::size_t(std::max(0, max_per_series)));
      plans.insert(plans.end(), of_series.begin(), of_series.end());
    }
  } catch (const json::exception& error) {
    throw UserError(fmt::format("{}: an anomaly or plan lacks a field ({}); pass the JSON report analyze wrote",
                                report_path, error.what()));
  }
  return plans;
}

}  // namespace shapescope
