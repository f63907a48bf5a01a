#include "analyze/layout_plans.hpp"

#include <algorithm>

namespace shapescope::analyze {

namespace {

const SeriesPoint* point_at(const Series& series, int64_t m) {
  const auto found = std::lower_bound(series.points.begin(), series.points.end(), m,
                                      [](const SeriesPoint& point, int64_t value) { return point.m < value; });
  return found != series.points.end() && found->m == m ? &*found : nullptr;
}

bool contiguous(const std::string& layout) { return layout.rfind("contiguous", 0) == 0; }

}  // namespace

bool same_grouped_gemm_other_layout(const Series& a, const Series& b) {
  if (!a.grouped || !b.grouped || &a == &b) return false;
  const GroupedSeriesInfo &ga = *a.grouped, &gb = *b.grouped;
  return a.device == b.device && a.model == b.model && a.module == b.module && a.n == b.n && a.k == b.k &&
         a.kernel == b.kernel && ga.routing == gb.routing && ga.ep == gb.ep && ga.groups == gb.groups &&
         ga.layout != gb.layout;
}

std::vector<LayoutPlan> find_layout_plans(const SeriesAnalysis& analysis, const std::vector<Series>& all,
                                          double split_ratio) {
  std::vector<LayoutPlan> plans;
  const Series& series = *analysis.series;
  if (!series.grouped) return plans;
  for (const Finding& finding : analysis.findings) {
    std::optional<LayoutPlan> best;
    for (const Series& other : all) {
      if (!same_grouped_gemm_other_layout(series, other)) continue;
      const SeriesPoint* there = point_at(other, finding.anomaly.m);
      if (!there || there->time_us >= finding.anomaly.time_us * split_ratio) continue;
      if (best && there->time_us >= best->planned_us) continue;
      LayoutPlan plan;
      plan.m = finding.anomaly.m;
      plan.from = series.grouped->layout;
      plan.to = other.grouped->layout;
      plan.kind = contiguous(plan.from) && contiguous(plan.to) ? "alignment" : "layout";
      plan.time_us = finding.anomaly.time_us;
      plan.planned_us = there->time_us;
      plan.source = other.source;
      best = plan;
    }
    if (best) plans.push_back(*best);
  }
  return plans;
}

nlohmann::json layout_plans_json(const std::vector<LayoutPlan>& plans) {
  nlohmann::json list = nlohmann::json::array();
  for (const LayoutPlan& plan : plans) {
    list.push_back({{"m", plan.m},
                    {"kind", plan.kind},
                    {"from", plan.from},
                    {"to", plan.to},
                    {"time_us", plan.time_us},
                    {"planned_us", plan.planned_us},
                    {"gain", plan.gain()},
                    {"source", plan.source}});
  }
  return list;
}

}  // namespace shapescope::analyze
