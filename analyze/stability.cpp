#include "analyze/stability.hpp"

#include <algorithm>
#include <iterator>
#include <map>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

std::vector<int64_t> intersect(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return both;
}

std::string list_ms(const std::vector<int64_t>& ms, std::size_t limit) {
  std::string text;
  for (std::size_t i = 0; i < ms.size() && i < limit; ++i) text += fmt::format("{}{}", i ? " " : "", ms[i]);
  if (ms.size() > limit) text += fmt::format(" … ({} more)", ms.size() - limit);
  return text.empty() ? "none" : text;
}

}  // namespace

FlaggedRun flag_run(const Series& series, const AnomalyFinder& find) {
  FlaggedRun run;
  run.label = series.name;
  for (const SeriesPoint& point : series.points) run.measured.push_back(point.m);
  for (const Anomaly& anomaly : find(series)) run.flagged.push_back(anomaly.m);
  std::sort(run.flagged.begin(), run.flagged.end());
  return run;
}

double jaccard(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const std::size_t both = intersect(a, b).size();
  const std::size_t either = a.size() + b.size() - both;
  return either == 0 ? 1.0 : static_cast<double>(both) / static_cast<double>(either);
}

std::vector<int64_t> restrict_to(const std::vector<int64_t>& values, const std::vector<int64_t>& within) {
  return intersect(values, within);
}

StabilityReport stability_report(std::vector<FlaggedRun> runs, const std::string& rule) {
  if (runs.size() < 2) {
    throw UserError(fmt::format("--stability needs at least two runs, got {}; pass two profiles or a file with a "
                                "'pass' column",
                                runs.size()));
  }
  StabilityReport report;
  report.rule = rule;
  report.runs = std::move(runs);
  const std::size_t count = report.runs.size();
  report.jaccard.assign(count, std::vector<double>(count, 1.0));
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t j = i + 1; j < count; ++j) {
      // Only M that both runs measured can agree or disagree.
      const std::vector<int64_t> shared = intersect(report.runs[i].measured, report.runs[j].measured);
      const double index = jaccard(restrict_to(report.runs[i].flagged, shared),
                                   restrict_to(report.runs[j].flagged, shared));
      report.jaccard[i][j] = report.jaccard[j][i] = index;
    }
  }
  report.measured_by_all = report.runs.front().measured;
  report.in_every_run = report.runs.front().flagged;
  std::map<int64_t, AnomalyAgreement> by_m;
  for (std::size_t r = 0; r < count; ++r) {
    const FlaggedRun& run = report.runs[r];
    report.measured_by_all = intersect(report.measured_by_all, run.measured);
    report.in_every_run = intersect(report.in_every_run, run.flagged);
    for (const int64_t m : run.flagged) {
      by_m[m].m = m;
      by_m[m].flagged_by.push_back(r);
    }
  }
  for (auto& [m, agreement] : by_m) {
    for (const FlaggedRun& run : report.runs) {
      agreement.measured_by += std::binary_search(run.measured.begin(), run.measured.end(), m);
    }
    report.anomalies.push_back(std::move(agreement));
  }
  return report;
}

std::string list_not_reproduced(const StabilityReport& report, std::size_t limit) {
  std::vector<std::string> items;
  for (const AnomalyAgreement& anomaly : report.anomalies) {
    if (anomaly.reproduced() || anomaly.measured_by < 2) continue;
    std::string runs;
    for (const std::size_t r : anomaly.flagged_by) runs += fmt::format("{}{}", runs.empty() ? "" : ", ", r + 1);
    items.push_back(fmt::format("{} (run{} {} of {})", anomaly.m, anomaly.flagged_by.size() > 1 ? "s" : "", runs,
                                anomaly.measured_by));
  }
  std::string text;
  for (std::size_t i = 0; i < items.size() && i < limit; ++i) text += (i ? ", " : "") + items[i];
  if (items.size() > limit) text += fmt::format(" … ({} more)", items.size() - limit);
  return items.empty() ? "none" : fmt::format("{} M: {}", items.size(), text);
}

std::string format_stability(const StabilityReport& report, std::size_t list_limit) {
  std::string text = fmt::format("stability of the {} rule over {} runs ({} M measured by all)\n", report.rule,
                                 report.runs.size(), report.measured_by_all.size());
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    const FlaggedRun& run = report.runs[i];
    text += fmt::format("  run {}: {} — {} of {} M flagged: {}\n", i + 1, run.label, run.flagged.size(),
                        run.measured.size(), list_ms(run.flagged, list_limit));
  }
  text += "  Jaccard of the flagged sets:\n         ";
  for (std::size_t j = 0; j < report.runs.size(); ++j) text += fmt::format(" {:>7}", fmt::format("run {}", j + 1));
  text += "\n";
  for (std::size_t i = 0; i < report.runs.size(); ++i) {
    text += fmt::format("    {:<5}", fmt::format("run {}", i + 1));
    for (const double value : report.jaccard[i]) text += fmt::format(" {:>7.3f}", value);
    text += "\n";
  }
  text += fmt::format("  flagged in every run: {} M: {}\n", report.in_every_run.size(),
                      list_ms(report.in_every_run, list_limit));
  text += fmt::format("  not reproduced: {}\n", list_not_reproduced(report, list_limit));
  return text;
}

}  // namespace shapescope::analyze
