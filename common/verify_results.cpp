#include "common/verify_results.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

double required_time(const nlohmann::json& plan, const char* key, const std::string& where) {
  if (!plan.contains(key) || !plan[key].is_number() || !(plan[key].get<double>() > 0)) {
    throw UserError(fmt::format("{}: '{}' must be a positive number of µs; rerun profile --verify-plans", where, key));
  }
  return plan[key].get<double>();
}

}  // namespace

double VerifiedPlan::predicted_gain() const {
  return monolithic_us > 0 ? (monolithic_us - predicted_us) / monolithic_us : 0;
}

double VerifiedPlan::measured_gain() const {
  const double measured = std::min(measured_serial_us, measured_two_streams_us);
  return monolithic_us > 0 ? (monolithic_us - measured) / monolithic_us : 0;
}

std::size_t VerifyResults::count(const std::string& verdict) const {
  return static_cast<std::size_t>(
      std::count_if(plans.begin(), plans.end(), [&](const VerifiedPlan& plan) { return plan.verdict == verdict; }));
}

std::string plan_verdict(double predicted_gain, double measured_gain) {
  if (measured_gain <= 0) return "refuted";
  return measured_gain >= 0.5 * predicted_gain ? "confirmed" : "weaker";
}

nlohmann::json verify_results_json(const std::string& device, const std::string& report_path) {
  return {{"device", device}, {"report", report_path}, {"plans", nlohmann::json::array()},
          {"skipped", nlohmann::json::array()}};
}

nlohmann::json verified_plan_json(const ReportedPlan& reported, const VerifiedPlan& verified, double max_rel_err,
                                  const std::string& note) {
  return {{"series", verified.series},
          {"kernel", reported.kernel},
          {"n", reported.n},
          {"k", reported.k},
          {"batch_count", reported.batch_count},
          {"m", verified.m},
          {"kind", reported.kind},
          {"parts", verified.parts},
          {"predicted_us", verified.predicted_us},
          {"measured_serial_us", verified.measured_serial_us},
          {"measured_two_streams_us", verified.measured_two_streams_us},
          {"monolithic_us", verified.monolithic_us},
          {"predicted_gain_pct", 100 * verified.predicted_gain()},
          {"measured_gain_pct", 100 * verified.measured_gain()},
          {"verdict", verified.verdict},
          {"report_time_us", reported.reported_time_us},
          {"report_predicted_us", reported.reported_predicted_us},
          {"report_gain_pct", reported.reported_gain_pct},
          {"max_rel_err", max_rel_err},
          {"note", note}};
}

VerifyResults read_verify_results(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw UserError(fmt::format("{}: cannot open; check the --verify-results path", path));
  std::stringstream text;
  text << file.rdbuf();
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& error) {  // parse_error, or out_of_range for a number past a double
    throw UserError(fmt::format("{}: not JSON ({}); pass the file profile --verify-plans wrote", path, error.what()));
  }
  if (!root.is_object() || !root.contains("plans") || !root["plans"].is_array()) {
    throw UserError(fmt::format("{}: no \"plans\" array; pass the file profile --verify-plans wrote", path));
  }
  VerifyResults results;
  results.source = path;
  results.device = root.value("device", "");
  for (std::size_t i = 0; i < root["plans"].size(); ++i) {
    const nlohmann::json& entry = root["plans"][i];
    const std::string where = fmt::format("{}: plans[{}]", path, i);
    if (!entry.is_object() || !entry.contains("m") || !entry["m"].is_number_integer() ||
        !entry.contains("parts") || !entry["parts"].is_array()) {
      throw UserError(fmt::format("{}: needs integer 'm' and array 'parts'; rerun profile --verify-plans", where));
    }
    VerifiedPlan plan;
    plan.series = entry.value("series", "");
    plan.m = entry["m"].get<int64_t>();
    for (const auto& part : entry["parts"]) {
      if (!part.is_number_integer()) throw UserError(fmt::format("{}: 'parts' must hold integers", where));
      plan.parts.push_back(part.get<int64_t>());
    }
    plan.predicted_us = required_time(entry, "predicted_us", where);
    plan.measured_serial_us = required_time(entry, "measured_serial_us", where);
    plan.measured_two_streams_us = required_time(entry, "measured_two_streams_us", where);
    plan.monolithic_us = required_time(entry, "monolithic_us", where);
    plan.verdict = entry.value("verdict", plan_verdict(plan.predicted_gain(), plan.measured_gain()));
    if (plan.verdict != "confirmed" && plan.verdict != "weaker" && plan.verdict != "refuted") {
      throw UserError(fmt::format("{}: verdict '{}' is not confirmed, weaker or refuted", where, plan.verdict));
    }
    results.plans.push_back(std::move(plan));
  }
  return results;
}

}  // namespace shapescope
