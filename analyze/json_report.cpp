#include "analyze/json_report.hpp"

#include "common/plan_report.hpp"

namespace shapescope::analyze {

using nlohmann::json;

namespace {

json optional_plan(const std::optional<SplitPlan>& plan) { return plan ? plan_json(*plan) : json(nullptr); }

json group_json(const CompareGroup& group) {
  return {{"name", group.name},
          {"points", group.points},
          {"faster", group.faster},
          {"slower", group.slower},
          {"ties", group.ties},
          {"geomean_speedup", group.geomean_speedup},
          {"mean_slowdown_pct", 100 * group.mean_slowdown},
          {"max_slowdown_pct", 100 * group.max_slowdown}};
}

std::string outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::faster:
      return "faster";
    case Outcome::slower:
      return "slower";
    case Outcome::tie:
      return "tie";
  }
  return "unknown";
}

}  // namespace

json plan_json(const SplitPlan& plan) {
  return plan_record_json({to_string(plan.kind), plan.parts, plan.predicted_us, plan.gain});
}

json analysis_options_json(const AnalysisOptions& options) {
  return {{"rule", to_string(options.rule)},
          {"utils_ratio", options.rule_options.utils_ratio},
          {"check_split_gemm", options.check_split},
          {"split_ratio", options.split.split_ratio},
          {"max_parts", options.split.max_parts},
          {"launch_overhead_us", options.split.launch_overhead_us}};
}

json series_json(const SeriesAnalysis& analysis) {
  const Series& series = *analysis.series;
  json excluded = json::array();
  for (const SeriesPoint& point : series.excluded) {
    excluded.push_back({{"m", point.m}, {"status", point.status}, {"note", point.note}, {"line", point.line}});
  }
  json duplicates = json::array();
  for (const DuplicateM& duplicate : series.duplicates) {
    duplicates.push_back({{"m", duplicate.m}, {"count", duplicate.count}, {"kept_time_us", duplicate.kept_time_us}});
  }
  json anomalies = json::array();
  json plan_counts = {{"study_pair", 0}, {"halves", 0}, {"k_way", 0}, {"pad_up", 0}};
  json best_counts = plan_counts;
  std::size_t with_plan = 0;
  for (const Finding& finding : analysis.findings) {
    const Anomaly& anomaly = finding.anomaly;
    const SeriesPoint& point = series.points[anomaly.index];
    anomalies.push_back({{"m", anomaly.m},
                         {"time_us", anomaly.time_us},
                         {"utils", anomaly.utils},
                         {"kernel_name", point.kernel_name},
                         {"best_smaller_m", anomaly.reference_m},
                         {"best_smaller_utils", anomaly.reference_utils},
                         {"drop_pct", 100 * anomaly.drop()},
                         {"plans",
                          {{"study_pair", optional_plan(finding.plans.study_pair)},
                           {"halves", optional_plan(finding.plans.halves)},
                           {"k_way", optional_plan(finding.plans.k_way)},
                           {"pad_up", optional_plan(finding.plans.pad_up)}}},
                         {"best_plan", optional_plan(finding.best)}});
    for (const auto& [kind, plan] : {std::pair{"study_pair", &finding.plans.study_pair},
                                     std::pair{"halves", &finding.plans.halves}, std::pair{"k_way", &finding.plans.k_way},
                                     std::pair{"pad_up", &finding.plans.pad_up}}) {
      if (*plan) plan_counts[kind] = plan_counts[kind].get<int>() + 1;
    }
    if (finding.best) {
      ++with_plan;
      const std::string kind = to_string(finding.best->kind);
      best_counts[kind] = best_counts[kind].get<int>() + 1;
    }
  }
  const Recoverable& recoverable = analysis.recoverable;
  return {{"name", series.name},
          {"source", series.source},
          {"format", series.format},
          {"device", series.device},
          {"multiprocessors", series.multiprocessors},
          {"kernel", series.kernel},
          {"dtype", series.dtype},
          {"model", series.model},
          {"module", series.module},
          {"n", series.n},
          {"k", series.k},
          {"batch_count", series.batch_count},
          {"peak_tflops", series.peak_tflops},
          {"points", series.points.size()},
          {"excluded", excluded},
          {"duplicates", duplicates},
          {"anomalies", anomalies},
          {"summary",
           {{"anomalies", analysis.findings.size()},
            {"with_plan", with_plan},
            {"plans_found", plan_counts},
            {"best_plan_kinds", best_counts},
            {"recoverable_us", recoverable.recoverable_us},
            {"sweep_us", recoverable.sweep_us},
            {"recoverable_pct", 100 * recoverable.fraction()},
            {"weighted", recoverable.weighted}}}};
}

json compare_json(const CompareResult& result) {
  json per_shape = json::array(), per_group = json::array(), points = json::array();
  for (const CompareGroup& group : result.per_shape) per_shape.push_back(group_json(group));
  for (const CompareGroup& group : result.per_group) per_group.push_back(group_json(group));
  for (const ComparedPoint& point : result.points) {
    points.push_back({{"group", point.group},
                      {"shape", point.shape},
                      {"m", point.m},
                      {"time_a_us", point.time_a_us},
                      {"time_b_us", point.time_b_us},
                      {"speedup", point.speedup},
                      {"outcome", outcome_name(point.outcome)},
                      {"winning_format", winning_format(result, point)}});
  }
  return {{"a", result.label_a},           {"b", result.label_b},
          {"format_a", result.format_a},   {"format_b", result.format_b},
          {"headline", compare_headline(result)}, {"overall", group_json(result.overall)},
          {"per_group", per_group},        {"per_shape", per_shape},
          {"only_in_a", result.only_in_a}, {"only_in_b", result.only_in_b},
          {"points", points}};
}

}  // namespace shapescope::analyze
