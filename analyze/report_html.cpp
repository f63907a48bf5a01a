#include "analyze/report_html.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include "analyze/capture_report.hpp"
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
  html += "<table class=\"regions\">\n" + header_row({"M range", "drop", "cause", "remedy", "time lost"});
  for (const RegionRow& row : region_rows(triage, report.row_limit, left_out)) {
    html += "<tr>" + cell(row.range) + cell(row.drop, true) + cell(row.cause) + cell(row.remedy) + cell(row.lost, true) +
            "</tr>\n";
  }
  html += "</table>\n";
  if (left_out > 0) html += fmt::format("<p class=\"note\">{} smaller regions not listed.</p>\n", left_out);
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

std::string page_start(const std::string& title) {
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                     "<title>{0}</title><style>{1}</style></head><body>\n<h1>{0}</h1>\n",
                     xml_escape(title), kStyle);
}

std::string size_table(const EvaluatedList& list) {
  std::string html = "<table>\n" + header_row({"size", "batches served", "count", "weight", "mean padding (rows)",
                                                "T(size) µs", "share of expected time"});
  for (const SizeUse& use : list.evaluation.uses) {
    const std::string served = use.batches == 0 ? "none" : fmt::format("{}–{}", use.batch_min, use.batch_max);
    html += "<tr>" + cell(fmt::format("{}", use.size), true) + cell(served, true) +
            cell(fmt::format("{}", use.batches), true) + cell(fmt::format("{:.2f}%", 100 * use.weight), true) +
            cell(fmt::format("{:.2f}", use.mean_padding), true) + cell(fmt::format("{:.1f}", use.time_us), true) +
            cell(fmt::format("{:.1f}%", 100 * use.weight * use.time_us / list.evaluation.expected_us), true) +
            "</tr>\n";
  }
  return html + "</table>\n";
}

std::string note_list(const std::vector<std::string>& notes) {
  if (notes.empty()) return "";
  std::string html = "<ul class=\"note\">\n";
  for (const std::string& note : notes) html += "<li>" + xml_escape(note) + "</li>\n";
  return html + "</ul>\n";
}

std::string capture_section(const CaptureRecommendation& recommendation) {
  const StepTimeModel& model = *recommendation.model;
  std::string html = fmt::format(
      "<h2>Capture sizes</h2>\n<p>{} at tp{} on {}. Step time T(M) = Σ over {} modules of layers × the module's "
      "fastest profile at M, on the {} M values {}–{} every module measured (no interpolation); a batch b runs padded "
      "to the smallest captured size ≥ b. Batches: {} ({} sizes up to {}, max batch {}).</p>\n",
      xml_escape(model.model), model.tp, xml_escape(model.device.empty() ? "an unknown device" : model.device),
      model.modules.size(), model.grid.size(), model.grid.front(), model.grid.back(),
      xml_escape(recommendation.distribution), recommendation.problem.batches.size(), recommendation.largest_batch,
      recommendation.max_batch);
  const int64_t last_size = recommendation.problem.sizes.back();
  html += "<table>\n" + header_row({"module", "N", "K", "batch", "layers", "cost model",
                                    fmt::format("share of T({})", last_size), "profiles"});
  for (std::size_t i = 0; i < model.modules.size(); ++i) {
    const ModuleTerm& term = model.modules[i];
    std::vector<std::string> kernels;
    for (const Series* series : term.profiles) kernels.push_back(series->kernel);
    html += "<tr>" + cell(term.problem.module) + cell(fmt::format("{}", term.problem.n), true) +
            cell(fmt::format("{}", term.problem.k), true) + cell(fmt::format("{}", term.problem.batch_count), true) +
            cell(fmt::format("{}", term.layers), true) + cell(to_string(term.cost_model)) +
            cell(fmt::format("{:.1f}%", 100 * module_share(model, i, last_size)), true) +
            cell(fmt::format("{}", fmt::join(kernels, ", "))) + "</tr>\n";
  }
  html += "</table>\n";
  std::vector<std::string> notes = model.notes;
  if (!model.excluded.empty()) notes.push_back(fmt::format("left out: {}", fmt::join(model.excluded, ", ")));
  notes.insert(notes.end(), recommendation.notes.begin(), recommendation.notes.end());
  html += note_list(notes);

  html += "<table>\n" + header_row({"list", "graphs", "expected step µs", "vs vLLM default"});
  for (const EvaluatedList& list : recommendation.lists) {
    html += "<tr>" + cell(list.label) + cell(fmt::format("{}", list.evaluation.sizes.size()), true) +
            cell(fmt::format("{:.2f}", list.evaluation.expected_us), true) +
            cell(change_against_default(recommendation, list), true) + "</tr>\n";
  }
  html += "</table>\n";
  const EvaluatedList& recommended = recommendation.recommended();
  std::string syntax = vllm_compilation_config(recommended.evaluation.sizes) + "\n";
  if (const std::string sizes = vllm_cuda_graph_sizes(recommended.evaluation.sizes); !sizes.empty()) {
    syntax += sizes + "\n";
  }
  syntax += sglang_cuda_graph_bs(recommended.evaluation.sizes);
  html += fmt::format("<h3>Recommended: {}</h3>\n<pre>{}</pre>\n", xml_escape(recommended.label), xml_escape(syntax));
  html += size_table(recommended);
  for (const EvaluatedList& list : recommendation.lists) {
    if (&list == &recommended) continue;
    html += fmt::format("<details><summary>{} — per size</summary>\n", xml_escape(list.label)) + note_list(list.notes) +
            size_table(list) + "</details>\n";
  }
  return html;
}

}  // namespace

std::string render_capture_html(const CaptureRecommendation& recommendation) {
  const StepTimeModel& model = *recommendation.model;
  return page_start(fmt::format("shapescope capture sizes: {} tp{}", model.model, model.tp)) +
         capture_section(recommendation) + "</body></html>\n";
}

std::string render_html_report(const TriageReport& report) {
  std::string html = page_start(report.title);
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
