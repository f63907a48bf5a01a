#include "analyze/report_markdown.hpp"

#include <fmt/format.h>

namespace shapescope::analyze {

namespace {

// Pipes would end a table cell; newlines would end the row.
std::string md(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    if (c == '|') escaped += "\\|";
    else if (c == '\n') escaped += ' ';
    else escaped += c;
  }
  return escaped;
}

std::string table_row(const std::vector<std::string>& cells) {
  std::string row = "|";
  for (const std::string& text : cells) {
    row += ' ';
    row += md(text);
    row += " |";
  }
  return row + "\n";
}

std::string table_header(const std::vector<std::string>& names) {
  std::string rule = "|";
  for (std::size_t i = 0; i < names.size(); ++i) rule += " --- |";
  return table_row(names) + rule + "\n";
}

}  // namespace

std::string render_markdown_report(const TriageReport& report) {
  std::string text = fmt::format("# {}\n\nAnomaly rule: {}.\n\n", report.title, report.rule);
  if (!report.plot_path.empty()) text += fmt::format("![MFU over M]({})\n\n", report.plot_path);
  text += "## Anomalies\n\n";
  for (const SeriesTriage& triage : report.series) {
    const Series& series = *triage.analysis->series;
    text += fmt::format("### {}\n\n{} points, N={} K={}, {} anomalies; recoverable with the best plans: {:.1f}% of "
                        "the sweep's time.\n\n",
                        series.name, series.points.size(), series.n, series.k, triage.analysis->findings.size(),
                        100 * triage.analysis->recoverable.fraction());
    if (triage.analysis->findings.empty()) continue;
    std::size_t left_out = 0;
    text += "Regions (consecutive anomalies with one cause; largest time lost first):\n\n";
    text += table_header({"M range", "drop", "cause", "remedy", "time lost"});
    for (const RegionRow& row : region_rows(triage, report.row_limit, left_out)) {
      text += table_row({row.range, row.drop, row.cause, row.remedy, row.lost});
    }
    if (left_out > 0) text += fmt::format("\n{} smaller regions not listed.\n", left_out);
    text += "\nEvery anomaly:\n\n";
    text += table_header({"M", "MFU", "reference MFU (M)", "drop", "causes", "best plan", "verified"});
    for (const AnomalyRow& row : anomaly_rows(triage, report.verify, report.row_limit, left_out)) {
      text += table_row({row.m, row.mfu, row.reference, row.drop, row.causes, row.plan, row.verified});
    }
    if (left_out > 0) text += fmt::format("\n{} smaller drops not listed.\n", left_out);
    text += "\n";
  }
  if (report.verify) {
    const VerifyResults& verify = *report.verify;
    text += fmt::format("## Plans verified on the GPU\n\n{} plans: {} confirmed, {} weaker, {} refuted.\n\n",
                        verify.plans.size(), verify.count("confirmed"), verify.count("weaker"), verify.count("refuted"));
    text += table_header({"series", "M", "parts", "monolithic µs", "predicted µs", "serial µs", "two streams µs", "verdict"});
    for (const VerifiedPlan& plan : verify.plans) {
      std::string parts;
      for (const int64_t part : plan.parts) parts += fmt::format("{}{}", parts.empty() ? "" : "+", part);
      text += table_row({plan.series, fmt::format("{}", plan.m), parts, fmt::format("{:.1f}", plan.monolithic_us),
                         fmt::format("{:.1f}", plan.predicted_us), fmt::format("{:.1f}", plan.measured_serial_us),
                         fmt::format("{:.1f}", plan.measured_two_streams_us), plan.verdict});
    }
    text += "\n";
  }
  if (report.compare) {
    const CompareResult& compare = *report.compare;
    text += fmt::format("## Compare: {} vs {}\n\n{}\n\n", compare.label_b, compare.label_a, compare_headline(compare));
    text += table_header({"group", "points", "B faster", "B slower", "ties", "geomean speedup", "max slowdown"});
    std::vector<CompareGroup> groups = compare.per_group;
    groups.push_back(compare.overall);
    for (const CompareGroup& group : groups) {
      text += table_row({group.name, fmt::format("{}", group.points), fmt::format("{}", group.faster),
                         fmt::format("{}", group.slower), fmt::format("{}", group.ties),
                         fmt::format("×{:.3f}", group.geomean_speedup), fmt::format("{:.1f}%", 100 * group.max_slowdown)});
    }
    text += "\n";
  }
  if (report.stability) {
    const StabilityReport& stability = *report.stability;
    text += fmt::format("## Stability over repeated sweeps ({} rule)\n\n", stability.rule);
    std::vector<std::string> columns = {"run", "flagged"};
    for (std::size_t j = 0; j < stability.runs.size(); ++j) columns.push_back(fmt::format("Jaccard vs run {}", j + 1));
    text += table_header(columns);
    for (std::size_t i = 0; i < stability.runs.size(); ++i) {
      std::vector<std::string> cells = {fmt::format("{}: {}", i + 1, stability.runs[i].label),
                                        fmt::format("{} of {}", stability.runs[i].flagged.size(),
                                                    stability.runs[i].measured.size())};
      for (const double value : stability.jaccard[i]) cells.push_back(fmt::format("{:.3f}", value));
      text += table_row(cells);
    }
    text += fmt::format("\nFlagged in every run: {} M. Not reproduced: {}.\n", stability.in_every_run.size(),
                        list_not_reproduced(stability, 50));
  }
  return text;
}

}  // namespace shapescope::analyze
