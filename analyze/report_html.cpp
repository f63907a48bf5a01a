#include "analyze/report_html.hpp"

#include <fmt/format.h>

#include "analyze/plot_svg.hpp"

namespace shapescope::analyze {

namespace {

constexpr const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; max-width: 1360px; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ccc; } h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.confirmed { color: #1a7f37; font-weight: bold; } .weaker { color: #9a6700; } .refuted { color: #cf222e; font-weight: bold; }
.note { color: #555; font-size: 13px; } figure { margin: 0; }
)";

std::string cell(const std::string& text, bool numeric = false) {
  return fmt::format("<td{}>{}</td>", numeric ? " class=\"num\"" : "", xml_escape(text));
}

std::string header_row(const std::vector<std::string>& names) {
  std::string row = "<tr>";
  for (const std::string& name : names) row += "<th>" + xml_escape(name) + "</th>";
  return row + "</tr>\n";
}

std::string verdict_class(const std::string& text) {
  for (const char* verdict : {"confirmed", "weaker", "refuted"}) {
    if (text.rfind(verdict, 0) == 0) return verdict;
  }
  return "";
}

std::string series_section(const SeriesTriage& triage, const TriageReport& report) {
  const Series& series = *triage.analysis->series;
  std::string html = fmt::format("<h3>{}</h3>\n<p class=\"note\">{} — {} points, N={} K={}, {} anomalies; "
                                 "recoverable with the best plans: {:.1f}% of the sweep's time</p>\n",
                                 xml_escape(series.name), xml_escape(series.device.empty() ? "device unknown" : series.device),
                                 series.points.size(), series.n, series.k, triage.analysis->findings.size(),
                                 100 * triage.analysis->recoverable.fraction());
  if (triage.analysis->findings.empty()) return html + "<p>No anomalies.</p>\n";
  std::size_t left_out = 0;
  const std::vector<AnomalyRow> rows = anomaly_rows(triage, report.verify, report.row_limit, left_out);
  html += "<table class=\"anomalies\">\n" +
          header_row({"M", "MFU", "reference MFU (M)", "drop", "causes", "best plan", "verified on the GPU"});
  for (const AnomalyRow& row : rows) {
    html += "<tr>" + cell(row.m, true) + cell(row.mfu, true) + cell(row.reference, true) + cell(row.drop, true) +
            cell(row.causes) + cell(row.plan) +
            fmt::format("<td class=\"{}\">{}</td>", verdict_class(row.verified), xml_escape(row.verified)) + "</tr>\n";
  }
  html += "</table>\n";
  if (left_out > 0) html += fmt::format("<p class=\"note\">{} smaller drops not listed.</p>\n", left_out);
  return html;
}

std::string verify_section(const VerifyResults& verify) {
  std::string html = fmt::format("<h2>Plans verified on the GPU</h2>\n<p>{} — {} plans: {} confirmed, {} weaker, "
                                 "{} refuted (confirmed: measured gain ≥ half the predicted).</p>\n",
                                 xml_escape(verify.device.empty() ? verify.source : verify.device), verify.plans.size(),
                                 verify.count("confirmed"), verify.count("weaker"), verify.count("refuted"));
  html += "<table>\n" + header_row({"series", "M", "parts", "monolithic µs", "predicted µs", "serial µs",
                                    "two streams µs", "predicted gain", "measured gain", "verdict"});
  for (const VerifiedPlan& plan : verify.plans) {
    std::string parts;
    for (const int64_t part : plan.parts) parts += fmt::format("{}{}", parts.empty() ? "" : "+", part);
    html += "<tr>" + cell(plan.series) + cell(fmt::format("{}", plan.m), true) + cell(parts) +
            cell(fmt::format("{:.1f}", plan.monolithic_us), true) + cell(fmt::format("{:.1f}", plan.predicted_us), true) +
            cell(fmt::format("{:.1f}", plan.measured_serial_us), true) +
            cell(fmt::format("{:.1f}", plan.measured_two_streams_us), true) +
            cell(fmt::format("{:.1f}%", 100 * plan.predicted_gain()), true) +
            cell(fmt::format("{:.1f}%", 100 * plan.measured_gain()), true) +
            fmt::format("<td class=\"{0}\">{0}</td>", plan.verdict) + "</tr>\n";
  }
  return html + "</table>\n";
}

std::string group_rows(const std::vector<CompareGroup>& groups) {
  std::string html;
  for (const CompareGroup& group : groups) {
    html += "<tr>" + cell(group.name) + cell(fmt::format("{}", group.points), true) +
            cell(fmt::format("{}", group.faster), true) + cell(fmt::format("{}", group.slower), true) +
            cell(fmt::format("{}", group.ties), true) + cell(fmt::format("×{:.3f}", group.geomean_speedup), true) +
            cell(fmt::format("{:.1f}%", 100 * group.mean_slowdown), true) +
            cell(fmt::format("{:.1f}%", 100 * group.max_slowdown), true) + "</tr>\n";
  }
  return html;
}

std::string compare_section(const CompareResult& compare) {
  const std::vector<std::string> columns = {"group", "points", "B faster", "B slower", "ties", "geomean speedup",
                                            "mean slowdown", "max slowdown"};
  std::string html = fmt::format("<h2>Compare: {} vs {}</h2>\n<p>{}</p>\n", xml_escape(compare.label_b),
                                 xml_escape(compare.label_a), xml_escape(compare_headline(compare)));
  html += "<table>\n" + header_row(columns) + group_rows(compare.per_group) + group_rows({compare.overall}) + "</table>\n";
  html += "<h3>Worst slowdowns of B</h3>\n<table>\n" + header_row({"group", "shape", "M", "A µs", "B µs", "speedup"});
  for (const ComparedPoint& point : worst_slowdowns(compare, 10)) {
    html += "<tr>" + cell(point.group) + cell(point.shape) + cell(fmt::format("{}", point.m), true) +
            cell(fmt::format("{:.2f}", point.time_a_us), true) + cell(fmt::format("{:.2f}", point.time_b_us), true) +
            cell(fmt::format("×{:.3f}", point.speedup), true) + "</tr>\n";
  }
  return html + "</table>\n";
}

std::string stability_section(const StabilityReport& stability) {
  std::string html = fmt::format("<h2>Stability over repeated sweeps ({} rule)</h2>\n<table>\n", xml_escape(stability.rule));
  std::vector<std::string> columns = {"run", "flagged"};
  for (std::size_t j = 0; j < stability.runs.size(); ++j) columns.push_back(fmt::format("Jaccard vs run {}", j + 1));
  html += header_row(columns);
  for (std::size_t i = 0; i < stability.runs.size(); ++i) {
    html += "<tr>" + cell(fmt::format("{}: {}", i + 1, stability.runs[i].label)) +
            cell(fmt::format("{} of {}", stability.runs[i].flagged.size(), stability.runs[i].measured.size()), true);
    for (const double value : stability.jaccard[i]) html += cell(fmt::format("{:.3f}", value), true);
    html += "</tr>\n";
  }
  std::string common;
  for (const int64_t m : stability.in_every_run) common += fmt::format("{}{}", common.empty() ? "" : ", ", m);
  return html + fmt::format("</table>\n<p>Flagged in every run ({}): {}</p>\n<p>Not reproduced: {}</p>\n",
                            stability.in_every_run.size(), common.empty() ? "none" : common,
                            xml_escape(list_not_reproduced(stability, 50)));
}

}  // namespace

std::string render_html_report(const TriageReport& report) {
  std::string html = fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                                 "<title>{0}</title><style>{1}</style></head><body>\n<h1>{0}</h1>\n",
                                 xml_escape(report.title), kStyle);
  html += fmt::format("<p class=\"note\">Anomaly rule: {}. Causes are what the data supports; plans are predicted "
                      "from the profile's own measurements.</p>\n",
                      xml_escape(report.rule));
  if (!report.plot_svg.empty()) html += "<figure class=\"plot\">\n" + report.plot_svg + "</figure>\n";
  html += "<h2>Anomalies</h2>\n";
  for (const SeriesTriage& triage : report.series) html += series_section(triage, report);
  if (report.verify) html += verify_section(*report.verify);
  if (report.compare) html += compare_section(*report.compare);
  if (report.stability) html += stability_section(*report.stability);
  return html + "</body></html>\n";
}

}  // namespace shapescope::analyze
