#include "analyze/triage_command.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "analyze/dispatch_table.hpp"
#include "analyze/explain.hpp"
#include "analyze/pass_agreement.hpp"
#include "analyze/plot_svg.hpp"
#include "analyze/profile_counters.hpp"
#include "analyze/read_multipass_csv.hpp"
#include "analyze/report_html.hpp"
#include "analyze/report_markdown.hpp"
#include "analyze/stability.hpp"
#include "common/atomic_file.hpp"
#include "common/json_text.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

std::vector<Anomaly> anomalies_of(const SeriesAnalysis& analysis) {
  std::vector<Anomaly> anomalies;
  for (const Finding& finding : analysis.findings) anomalies.push_back(finding.anomaly);
  return anomalies;
}

void print_causes(std::ostream& out, const SeriesTriage& triage, std::size_t top) {
  const std::vector<Finding>& findings = triage.analysis->findings;
  if (findings.empty() || top == 0) return;
  std::vector<std::size_t> order(findings.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return findings[a].anomaly.drop() > findings[b].anomaly.drop();
  });
  std::size_t explained = 0;
  for (const Explanation& explanation : triage.explanations) explained += explanation.explained();
  fmt::print(out, "{}\n  causes ({} of {} anomalies have a supported cause; worst drops first):\n",
             triage.analysis->series->name, explained, findings.size());
  for (std::size_t rank = 0; rank < order.size() && rank < top; ++rank) {
    const std::size_t i = order[rank];
    fmt::print(out, "    M={:<7} -{:.1f}%  {}\n", findings[i].anomaly.m, 100 * findings[i].anomaly.drop(),
               triage.explanations[i].summary());
  }
}

void write_text(const std::string& path, const std::string& text, std::ostream& out) {
  write_file_atomically(path, text);
  fmt::print(out, "wrote {}\n", path);
}

}  // namespace

void check_before_work(const AnalyzeRequest& request, const TriageRequest& triage) {
  check_numeric_options(request);
  for (const auto& [path, option] : {std::pair{request.json_path, "--json"}, std::pair{triage.plot_path, "--plot"},
                                     std::pair{triage.report_path, "--report"},
                                     std::pair{triage.dispatch_path, "--dispatch"}}) {
    if (!path.empty()) ensure_writable_file(path, option);
  }
  if (request.explain_with_counters)
    for (const std::string& input : request.inputs) required_counters_file(input);
}

bool TriageRequest::any(const AnalyzeRequest& request) const {
  return (explain_top > 0 && !request.inputs.empty()) || !stability.empty() || !passes.empty() || !plot_path.empty() ||
         !report_path.empty() || !dispatch_path.empty();
}

int run_triage(const AnalyzeRequest& request, const TriageRequest& triage, std::ostream& out) {
  check_numeric_options(request);
  if (!triage.verify_results_path.empty() && triage.report_path.empty()) {
    throw UserError("--verify-results is shown in the report; add --report out.html (or out.md)");
  }
  const std::string extension = std::filesystem::path(triage.report_path).extension().string();
  if (!triage.report_path.empty() && extension != ".html" && extension != ".md") {
    throw UserError(fmt::format("--report {}: name it .html (a page) or .md (Markdown)", triage.report_path));
  }
  const std::string rule = to_string(request.analysis.rule);
  const MWeights weights = request.m_weights_path.empty() ? MWeights() : MWeights::read(request.m_weights_path);

  // Series must outlive their analyses, and analyses their triage entries.
  std::vector<Series> all_series;
  for (const std::string& input : request.inputs) {
    for (Series& series : read_series_or_passes(input, request.read)) all_series.push_back(std::move(series));
  }
  std::vector<SeriesAnalysis> analyses;
  analyses.reserve(all_series.size());
  TriageReport report;
  report.rule = rule;
  report.row_limit = std::max<std::size_t>(request.top_n, 1) * 5;
  std::vector<CountersByM> counters;  // one per series when --explain-with-counters, read before any analysis
  if (request.explain_with_counters)
    for (const Series& series : all_series) counters.push_back(counters_beside(series.source));
  for (const Series& series : all_series) analyses.push_back(analyze_series(series, request.analysis, weights));
  for (std::size_t i = 0; i < analyses.size(); ++i) {
    const SeriesAnalysis& analysis = analyses[i];
    report.series.push_back(
        {&analysis, explain_anomalies(*analysis.series, anomalies_of(analysis), counters.empty() ? nullptr : &counters[i]),
         regions_of(analysis, all_series, weights, request)});
    print_causes(out, report.series.back(), triage.explain_top);
  }

  std::vector<PlotSeries> plots;
  for (const SeriesAnalysis& analysis : analyses) plots.push_back(plot_series(analysis));
  PlotOptions plot_options;
  plot_options.log_m = triage.log_m;
  plot_options.title = fmt::format("MFU over M ({} rule)", rule);
  if (!triage.plot_path.empty()) {
    write_text(triage.plot_path, render_mfu_svg(plots, plot_options), out);
    report.plot_path = std::filesystem::path(triage.plot_path).filename().string();
  }

  if (!triage.stability.empty()) {
    const AnomalyFinder find = [&](const Series& series) {
      return find_anomalies(series, request.analysis.rule, request.analysis.rule_options);
    };
    std::vector<Series> runs;
    for (const std::string& path : triage.stability) {
      for (Series& series : read_series_or_passes(path, request.read)) runs.push_back(std::move(series));
    }
    std::vector<FlaggedRun> flagged;
    for (const Series& run : runs) flagged.push_back(flag_run(run, find));
    report.stability = stability_report(std::move(flagged), rule);
    fmt::print(out, "{}", format_stability(*report.stability, request.top_n * 3));
  }

  if (!triage.passes.empty()) {
    if (request.analysis.rule != AnomalyRule::noise_aware) {
      throw UserError("--passes judges passes together with the noise-aware rule; leave out --rule study");
    }
    NoiseAwareOptions options;
    options.utils_ratio = request.analysis.rule_options.utils_ratio;
    fmt::print(out, "{}", format_pass_agreement(pass_agreement_of_files(triage.passes, request.read, options),
                                                request.top_n * 3));
  }

  if (!triage.dispatch_path.empty()) {
    if (all_series.empty()) throw UserError("--dispatch needs profiles to choose from; pass one or more CSVs");
    std::vector<const Series*> pointers;
    for (const Series& series : all_series) pointers.push_back(&series);
    const std::vector<DispatchTable> tables = build_dispatch_tables(pointers, request.analysis.split);
    write_text(triage.dispatch_path, json_text(dispatch_json(tables, request.analysis.split), 1), out);
  }

  if (!triage.report_path.empty()) {
    if (!triage.verify_results_path.empty()) report.verify = read_verify_results(triage.verify_results_path);
    if (request.compare.size() == 2) {
      report.compare = compare_series(read_series_file(request.compare[0], request.read),
                                      read_series_file(request.compare[1], request.read),
                                      std::filesystem::path(request.compare[0]).filename().string(),
                                      std::filesystem::path(request.compare[1]).filename().string(),
                                      request.compare_options);
    }
    if (extension == ".html") {
      if (!plots.empty()) report.plot_svg = render_mfu_svg(plots, plot_options);
      write_text(triage.report_path, render_html_report(report), out);
    } else {
      write_text(triage.report_path, render_markdown_report(report), out);
    }
  }
  return 0;
}

}  // namespace shapescope::analyze
