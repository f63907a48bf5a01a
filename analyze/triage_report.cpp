#include "analyze/triage_report.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace shapescope::analyze {

std::string describe_plan(const Finding& finding) {
  if (!finding.best) return "none";
  const SplitPlan& plan = *finding.best;
  std::string parts;
  for (const int64_t part : plan.parts) parts += fmt::format("{}{}", parts.empty() ? "" : "+", part);
  if (plan.kind == PlanKind::pad_up) parts = "pad to " + parts;
  return fmt::format("{} {} → {:.1f} µs (−{:.1f}%)", to_string(plan.kind), parts, plan.predicted_us, 100 * plan.gain);
}

std::vector<RegionRow> region_rows(const SeriesTriage& triage, std::size_t row_limit, std::size_t& left_out) {
  left_out = triage.regions.size() > row_limit ? triage.regions.size() - row_limit : 0;
  std::vector<RegionRow> rows;
  for (std::size_t i = 0; i < triage.regions.size() && i < row_limit; ++i) {
    const Region& region = triage.regions[i];
    rows.push_back({describe_range(region), describe_drop(region), describe_cause(region), describe_remedy(region),
                    fmt::format("{:.1f} µs", region.lost_us)});
  }
  return rows;
}

std::vector<AnomalyRow> anomaly_rows(const SeriesTriage& triage, const std::optional<VerifyResults>& verify,
                                     std::size_t row_limit, std::size_t& left_out) {
  const std::vector<Finding>& findings = triage.analysis->findings;
  std::vector<std::size_t> order(findings.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return findings[a].anomaly.drop() > findings[b].anomaly.drop();
  });
  left_out = order.size() > row_limit ? order.size() - row_limit : 0;
  order.resize(std::min(order.size(), row_limit));

  const std::string& name = triage.analysis->series->name;
  std::vector<AnomalyRow> rows;
  for (const std::size_t i : order) {
    const Finding& finding = findings[i];
    const Anomaly& anomaly = finding.anomaly;
    AnomalyRow row;
    row.m = fmt::format("{}", anomaly.m);
    row.mfu = fmt::format("{:.3f}", anomaly.utils);
    row.reference = fmt::format("{:.3f} (M={})", anomaly.reference_utils, anomaly.reference_m);
    row.drop = fmt::format("{:.1f}%", 100 * anomaly.drop());
    row.causes = i < triage.explanations.size() ? triage.explanations[i].summary() : "";
    row.plan = describe_plan(finding);
    row.verified = "";
    if (verify) {
      for (const VerifiedPlan& plan : verify->plans) {
        if (plan.m == anomaly.m && (plan.series.empty() || plan.series == name)) {
          row.verified = fmt::format("{}: measured gain {:.1f}% vs predicted {:.1f}%", plan.verdict,
                                     100 * plan.measured_gain(), 100 * plan.predicted_gain());
        }
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace shapescope::analyze
