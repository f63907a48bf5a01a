#include "analyze/terminal_summary.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "analyze/unmeasured_m.hpp"

namespace shapescope::analyze {

namespace {

std::string describe_plan(const std::optional<SplitPlan>& plan) {
  if (!plan) return "-";
  std::string parts;
  for (const int64_t part : plan->parts) {
    if (!parts.empty()) parts += '+';
    parts += std::to_string(part);
  }
  return fmt::format("{} {} -> {:.1f} us ({:.1f}% faster)", to_string(plan->kind), parts, plan->predicted_us,
                     100 * plan->gain);
}

// A grouped series: M is tokens, MFU counts the rows that hold one; the rest in numbers.
void print_grouped_line(std::ostream& out, const Series& series) {
  const GroupedSeriesInfo& g = *series.grouped;
  int64_t useful = 0, padded = 0;
  std::vector<double> executed, sol;
  for (const SeriesPoint& point : series.points) {
    useful += point.useful_rows;
    padded += point.padded_rows;
    executed.push_back(point.executed_utils);
    sol.push_back(point.sol_fraction);
  }
  const auto median = [](std::vector<double> values) {
    if (values.empty()) return 0.0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  };
  fmt::print(out,
             "  grouped: {} experts per GPU{}, routing {}, layout {}; M = tokens, MFU over useful rows; median executed "
             "MFU {:.4f}, median {:.0f}% of speed of light; padding {:.1f}% of layout rows\n",
             g.groups, g.ep > 1 ? fmt::format(" (EP{})", g.ep) : "", g.routing, g.layout, median(executed),
             100 * median(sol), useful + padded > 0 ? 100.0 * double(padded) / double(useful + padded) : 0.0);
}

void print_regions(std::ostream& out, const std::vector<Region>& regions, const SeriesAnalysis& analysis,
                   std::size_t top_n) {
  std::size_t supported = 0;
  for (const Region& region : regions) supported += region.supported_findings.size();
  fmt::print(out, "  regions: {} ({} of {} anomalies where a region's cause holds; largest time lost first{}):\n",
             regions.size(), supported, analysis.findings.size(), analysis.recoverable.weighted ? ", M-weighted" : "");
  for (std::size_t i = 0; i < regions.size() && i < top_n; ++i) {
    const Region& region = regions[i];
    fmt::print(out, "  {:>3}. {}: {}\n       cause: {}\n       remedy: {}\n", i + 1, describe_range(region),
               describe_drop(region), describe_cause(region), describe_remedy(region));
  }
  if (regions.size() > top_n) fmt::print(out, "       ({} smaller regions not listed)\n", regions.size() - top_n);
}

}  // namespace

void print_layout_plans(std::ostream& out, const SeriesAnalysis& analysis, const std::vector<LayoutPlan>& plans,
                        std::size_t top_n) {
  std::size_t alignment = 0;
  for (const LayoutPlan& plan : plans) alignment += plan.kind == "alignment";
  fmt::print(out, "  layout plans (other profiles of these experts): {} of {} anomalies faster in another layout "
                  "(alignment {}, masked/contiguous {})\n",
             plans.size(), analysis.findings.size(), alignment, plans.size() - alignment);
  std::vector<const LayoutPlan*> best;
  for (const LayoutPlan& plan : plans) best.push_back(&plan);
  std::stable_sort(best.begin(), best.end(), [](const LayoutPlan* a, const LayoutPlan* b) { return a->gain() > b->gain(); });
  if (best.size() > top_n) best.resize(top_n);
  for (const LayoutPlan* plan : best) {
    fmt::print(out, "    M={}: {} {:.1f} us -> {} {:.1f} us ({:.1f}% faster)\n", plan->m, plan->from, plan->time_us,
               plan->to, plan->planned_us, 100 * plan->gain());
  }
}

void print_series_summary(std::ostream& out, const SeriesAnalysis& analysis, const AnalysisOptions& options,
                          std::size_t top_n, const std::vector<Region>& regions) {
  const Series& series = *analysis.series;
  fmt::print(out, "{} [{}{}{}]\n", series.name, series.format, series.device.empty() ? "" : ", " + series.device,
             series.n > 0 ? fmt::format(", N={} K={}", series.n, series.k) : "");
  fmt::print(out, "  {} points, {} excluded (failed/skipped/implausible), {} duplicate M resolved\n",
             series.points.size(), series.excluded.size(), series.duplicates.size());
  if (!series.m_grid.empty()) {
    fmt::print(out, "  adaptive M search: {}; anomalies are judged against measured M only\n",
               describe_unmeasured(unmeasured_m(series), top_n));
  }
  if (series.grouped) print_grouped_line(out, series);
  if (!series.excluded.empty()) {
    std::string listed;
    for (std::size_t i = 0; i < series.excluded.size() && i < top_n; ++i) {
      const SeriesPoint& point = series.excluded[i];
      listed += fmt::format("{}M={} ({}{}, line {})", i > 0 ? ", " : "", point.m, point.status,
                            point.note.empty() ? "" : ": " + point.note, point.line);
    }
    fmt::print(out, "  excluded from plans: {}{}\n", listed, series.excluded.size() > top_n ? ", ..." : "");
  }
  if (!series.duplicates.empty()) {
    std::string listed;
    for (std::size_t i = 0; i < series.duplicates.size() && i < top_n; ++i) {
      const DuplicateM& duplicate = series.duplicates[i];
      listed += fmt::format("{}M={} ({} rows, kept {} us)", i > 0 ? ", " : "", duplicate.m, duplicate.count,
                            duplicate.kept_time_us);
    }
    fmt::print(out, "  duplicate M: {}{}\n", listed, series.duplicates.size() > top_n ? ", ..." : "");
  }
  fmt::print(out, "  anomalies ({} rule, utils ratio {}): {}\n", to_string(options.rule),
             options.rule_options.utils_ratio, analysis.findings.size());
  if (options.check_split) {
    std::size_t counts[4] = {0, 0, 0, 0};
    std::size_t with_plan = 0;
    for (const Finding& finding : analysis.findings) {
      const PlanSet& plans = finding.plans;
      counts[0] += plans.study_pair.has_value();
      counts[1] += plans.halves.has_value();
      counts[2] += plans.k_way.has_value();
      counts[3] += plans.pad_up.has_value();
      with_plan += finding.best.has_value();
    }
    fmt::print(out,
               "  plans (split ratio {}, <= {} parts, {} us per extra launch): study pair {}, halves {}, k-way {}, "
               "pad-up {}; a best plan for {} of {}\n",
               options.split.split_ratio, options.split.max_parts, options.split.launch_overhead_us, counts[0],
               counts[1], counts[2], counts[3], with_plan, analysis.findings.size());
    const Recoverable& recoverable = analysis.recoverable;
    fmt::print(out, "  recoverable if every anomaly ran its best plan: {:.1f} us of {:.1f} us ({:.2f}%), {}\n",
               recoverable.recoverable_us, recoverable.sweep_us, 100 * recoverable.fraction(),
               recoverable.weighted ? "weighted by the M histogram" : "uniform over the sweep");
  }
  if (analysis.findings.empty() || top_n == 0) return;
  print_regions(out, regions, analysis, top_n);
  std::vector<const Finding*> worst;
  for (const Finding& finding : analysis.findings) worst.push_back(&finding);
  std::stable_sort(worst.begin(), worst.end(),
                   [](const Finding* a, const Finding* b) { return a->anomaly.drop() > b->anomaly.drop(); });
  if (worst.size() > top_n) worst.resize(top_n);
  fmt::print(out, "  worst drops:\n  {:>8} {:>7} {:>16} {:>6}  {}\n", "M", "MFU", "best smaller M", "drop",
             options.check_split ? "best plan" : "");
  for (const Finding* finding : worst) {
    const Anomaly& anomaly = finding->anomaly;
    fmt::print(out, "  {:>8} {:>7.4f} {:>7} ({:.4f}) {:>5.1f}%  {}\n", anomaly.m, anomaly.utils, anomaly.reference_m,
               anomaly.reference_utils, 100 * anomaly.drop(), options.check_split ? describe_plan(finding->best) : "");
  }
}

void print_compare_summary(std::ostream& out, const CompareResult& result, std::size_t top_n) {
  fmt::print(out, "compare A = {}\n        B = {}\n", result.label_a, result.label_b);
  fmt::print(out, "  {}\n", compare_headline(result));
  if (result.only_in_a + result.only_in_b > 0) {
    fmt::print(out, "  ({} points only in A and {} only in B are left out)\n", result.only_in_a, result.only_in_b);
  }
  const auto table = [&](const char* title, const std::vector<CompareGroup>& groups) {
    fmt::print(out, "  {:<44} {:>6} {:>9} {:>6} {:>6} {:>5} {:>10}\n", title, "points", "speedup", "faster", "slower",
               "ties", "worst loss");
    for (const CompareGroup& group : groups) {
      fmt::print(out, "  {:<44} {:>6} {:>8.3f}x {:>6} {:>6} {:>5} {:>9.1f}%\n", group.name, group.points,
                 group.geomean_speedup, group.faster, group.slower, group.ties, 100 * group.max_slowdown);
    }
  };
  table("group", result.per_group);
  table("shape", result.per_shape);
  if (compares_formats(result)) {
    fmt::print(out, "  which format wins at each M (A {}, B {}):\n", result.format_a, result.format_b);
    for (const ComparedPoint& point : result.points) {
      const std::string winner = winning_format(result, point);
      fmt::print(out, "    {} | {} M={}: {} ({:.2f} us {} vs {:.2f} us {})\n", point.group, point.shape, point.m,
                 winner, point.time_a_us, result.format_a, point.time_b_us, result.format_b);
    }
  }
  const std::vector<ComparedPoint> worst = worst_slowdowns(result, top_n);
  if (!worst.empty()) {
    fmt::print(out, "  worst slowdowns of B:\n");
    for (const ComparedPoint& point : worst) {
      fmt::print(out, "    {} | {} M={}: {:.2f} us -> {:.2f} us ({:+.1f}%)\n", point.group, point.shape, point.m,
                 point.time_a_us, point.time_b_us, 100 * (point.time_b_us / point.time_a_us - 1));
    }
  }
}

}  // namespace shapescope::analyze
