// The triage outputs checked by structure: the SVG plot, the HTML and Markdown
// reports, the dispatch table and the verify-results reader.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "analyze/dispatch_table.hpp"
#include "analyze/explain.hpp"
#include "analyze/noise_aware_rule.hpp"
#include "analyze/plot_svg.hpp"
#include "analyze/regions.hpp"
#include "analyze/report_html.hpp"
#include "analyze/report_markdown.hpp"
#include "common/verify_results.hpp"
#include "common/user_error.hpp"
#include "triage_test_support.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope::analyze {
namespace {

using triage_testing::inject_step;
using triage_testing::noisy_series;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t found = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++found;
  return found;
}

// A series with a 20% cliff at points 100..119 that the split search can beat
// by splitting into smaller, faster-per-row sizes.
Series cliff_series(const std::string& name, double level) {
  Series series = noisy_series(300, 0.005, [level](std::size_t) { return level; });
  series.name = name;
  series.kernel = name;
  series.device = "NVIDIA H100 SXM";
  inject_step(series, 100, 20, 0.8);
  return series;
}

SeriesAnalysis analyze(const Series& series) {
  AnalysisOptions options;
  options.check_split = true;
  SeriesAnalysis analysis;
  analysis.series = &series;
  for (const Anomaly& anomaly : noise_aware_anomalies(series, {})) analysis.findings.push_back({anomaly, {}, {}});
  const SplitSearch search(series, options.split, series.points.back().m);
  for (Finding& finding : analysis.findings) {
    finding.plans = search.plans_for(finding.anomaly.index);
    finding.best = finding.plans.best(options.split.split_ratio);
  }
  return analysis;
}

TEST(PlotSvg, DrawsLinesMarkersAxesAndLegend) {
  const Series a = cliff_series("kernel_a", 0.7), b = cliff_series("kernel_b", 0.6);
  const SeriesAnalysis analysis_a = analyze(a), analysis_b = analyze(b);
  ASSERT_EQ(analysis_a.findings.size(), 20u);
  ASSERT_TRUE(analysis_a.findings.front().best) << "the split search should beat a 20% cliff";
  PlotOptions options;
  options.title = "two kernels <&>";
  const std::string svg = render_mfu_svg({plot_series(analysis_a), plot_series(analysis_b)}, options);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(count(svg, "<polyline"), 4u) << "measured and with-plans lines for both kernels";
  EXPECT_EQ(count(svg, "class=\"anomaly\""), 40u);
  EXPECT_EQ(count(svg, "stroke-dasharray"), 4u) << "two dashed plan lines and their two legend marks";
  EXPECT_NE(svg.find(">profiles kernel_…</text>"), std::string::npos) << "the shared part of the names, once";
  EXPECT_NE(svg.find(">a</text>"), std::string::npos);
  EXPECT_NE(svg.find(">b</text>"), std::string::npos);
  EXPECT_NE(svg.find("anomalies (20)"), std::string::npos);
  EXPECT_NE(svg.find("two kernels &lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(svg.find("MFU (fraction of peak)"), std::string::npos);
  EXPECT_NE(svg.find("M (batch rows)"), std::string::npos);

  options.log_m = true;
  const std::string log_svg = render_mfu_svg({plot_series(analysis_a)}, options);
  EXPECT_NE(log_svg.find("log scale"), std::string::npos);
  EXPECT_NE(log_svg.find(">1k</text>"), std::string::npos) << "power-of-two ticks on a log axis";
  EXPECT_THROW(render_mfu_svg({}, options), UserError);
}

TEST(PlotSvg, GridLinesStayFewWhateverTheValues) {
  PlotSeries absurd;
  absurd.label = "absurd";
  absurd.measured = {{1, 0.5}, {2, 1e20}};
  const std::string svg = render_mfu_svg({absurd}, {});
  EXPECT_LE(count(svg, "stroke=\"#e0e0e0\""), 2u * 40u);
  PlotSeries one_huge_m;
  one_huge_m.label = "one M";
  one_huge_m.measured = {{9.2e18, 0.5}};  // M + 1 == M in double: the span must not collapse
  EXPECT_LE(count(render_mfu_svg({one_huge_m}, {}), "stroke=\"#e0e0e0\""), 2u * 40u);
}

TEST(PlotSvg, PlanLineLiesAboveTheMeasuredMfuAtPlannedM) {
  const Series series = cliff_series("k", 0.7);
  const PlotSeries plot = plot_series(analyze(series));
  ASSERT_EQ(plot.with_best_plans.size(), plot.measured.size());
  for (std::size_t i = 0; i < plot.measured.size(); ++i) {
    EXPECT_GE(plot.with_best_plans[i].mfu, plot.measured[i].mfu);
  }
  EXPECT_GT(plot.with_best_plans[110].mfu, plot.measured[110].mfu * 1.1);
}

TEST(TriageReport, HtmlIsSelfContainedAndHasEveryTable) {
  const Series series = cliff_series("kernel_a", 0.7);
  const SeriesAnalysis analysis = analyze(series);
  TriageReport report;
  report.rule = "noise-aware";
  report.series.push_back({&analysis, explain_anomalies(series, [&] {
                             std::vector<Anomaly> anomalies;
                             for (const Finding& finding : analysis.findings) anomalies.push_back(finding.anomaly);
                             return anomalies;
                           }()),
                           find_regions(analysis, {})});
  const std::size_t regions = report.series.back().regions.size();
  ASSERT_GE(regions, 1u);
  report.plot_svg = render_mfu_svg({plot_series(analysis)}, {});
  VerifyResults verify;
  VerifiedPlan plan;
  plan.series = "kernel_a";
  plan.m = analysis.findings[0].anomaly.m;
  plan.parts = analysis.findings[0].best->parts;
  plan.monolithic_us = 100;
  plan.predicted_us = 80;
  plan.measured_serial_us = 95;
  plan.measured_two_streams_us = 97;
  plan.verdict = plan_verdict(plan.predicted_gain(), plan.measured_gain());
  verify.plans.push_back(plan);
  report.verify = verify;
  report.stability = stability_report({{"run 1", {16, 32}, {16, 32}}, {"run 2", {16, 32}, {32}}}, "noise-aware");
  report.row_limit = 5;

  const std::string html = render_html_report(report);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg")) << "no fetched resources";
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(count(html, "<tr>"), 1u + std::min<std::size_t>(regions, 5) + 1u + 5u + 1u + 1u + 1u + 2u)
      << "region header+regions, anomaly header+5, verify header+1, stability header+2";
  EXPECT_NE(html.find("<table class=\"regions\">"), std::string::npos);
  EXPECT_NE(html.find("15 smaller drops not listed"), std::string::npos);
  EXPECT_NE(html.find("class=\"weaker\""), std::string::npos) << "5% measured vs 20% predicted";
  EXPECT_NE(html.find("Flagged in every run (1): 32"), std::string::npos);
  EXPECT_NE(html.find("Not reproduced: 1 M: 16 (run 1 of 2)"), std::string::npos);

  const std::string markdown = render_markdown_report(report);
  EXPECT_NE(markdown.find("| M | MFU |"), std::string::npos);
  EXPECT_NE(markdown.find("1 plans: 0 confirmed, 1 weaker, 0 refuted"), std::string::npos);
  EXPECT_NE(markdown.find("## Stability"), std::string::npos);
  EXPECT_NE(markdown.find("Not reproduced: 1 M: 16 (run 1 of 2)."), std::string::npos);
}

TEST(VerifyResults, VerdictsAndReader) {
  EXPECT_EQ(plan_verdict(0.2, 0.15), "confirmed");
  EXPECT_EQ(plan_verdict(0.2, 0.05), "weaker");
  EXPECT_EQ(plan_verdict(0.2, -0.01), "refuted");
  const testing_support::ScratchDir scratch;
  const std::filesystem::path file = scratch.path() / "verify.json";
  std::ofstream(file) << R"({"device":"H100","plans":[{"m":2180,"parts":[1088,1092],"predicted_us":80,
    "measured_serial_us":90,"measured_two_streams_us":85,"monolithic_us":100}]})";
  const VerifyResults results = read_verify_results(file.string());
  ASSERT_EQ(results.plans.size(), 1u);
  EXPECT_EQ(results.plans[0].verdict, "confirmed") << "derived when the file does not say";
  EXPECT_DOUBLE_EQ(results.plans[0].measured_gain(), 0.15);
  std::ofstream(file) << R"({"plans":[{"m":2180,"parts":[1088,1092],"predicted_us":-1}]})";
  EXPECT_THROW(read_verify_results(file.string()), UserError);
  std::ofstream(file) << "not json";
  EXPECT_THROW(read_verify_results(file.string()), UserError);
}

TEST(DispatchTable, ChoosesTheFasterKernelAndSplitsTheCliff) {
  // kernel_b runs at MFU 0.60 everywhere; kernel_a at 0.70 except a cliff to 0.56 at points 100..119,
  // where splitting into kernel_a's fast sizes (≈0.70) beats kernel_b by more than the 0.9 bar.
  const Series a = cliff_series("kernel_a", 0.70);
  Series b = noisy_series(300, 0.0, [](std::size_t) { return 0.60; });
  b.name = b.kernel = "kernel_b";
  b.device = a.device;
  const std::vector<DispatchTable> tables = build_dispatch_tables({&a, &b}, {});
  ASSERT_EQ(tables.size(), 1u);
  const DispatchTable& table = tables[0];
  EXPECT_EQ(table.kernels, (std::vector<std::string>{"kernel_a", "kernel_b"}));
  // Every swept M appears once, in order, and ranges do not overlap.
  std::size_t covered = 0;
  int64_t previous = 0;
  for (const DispatchRange& range : table.ranges) {
    EXPECT_GT(range.m_first, previous);
    EXPECT_EQ(range.choices.front().m, range.m_first);
    EXPECT_EQ(range.choices.back().m, range.m_last);
    previous = range.m_last;
    covered += range.choices.size();
  }
  EXPECT_EQ(covered, a.points.size());
  for (const DispatchRange& range : table.ranges) {
    for (const DispatchChoice& choice : range.choices) {
      const bool in_cliff = choice.m >= a.points[100].m && choice.m <= a.points[119].m;
      EXPECT_EQ(choice.kernel, "kernel_a") << "M=" << choice.m;
      EXPECT_EQ(choice.action, in_cliff ? DispatchAction::split : DispatchAction::run) << "M=" << choice.m;
      EXPECT_LE(choice.predicted_us, choice.single_launch_us);
      if (choice.action == DispatchAction::split) {
        int64_t sum = 0;
        for (const int64_t part : choice.parts) sum += part;
        EXPECT_EQ(sum, choice.m);
      }
    }
  }
  const nlohmann::json json = dispatch_json(tables, {});
  EXPECT_EQ(json["schema"], "shapescope-dispatch/1");
  EXPECT_EQ(json["tables"][0]["ranges"].size(), table.ranges.size());
  EXPECT_EQ(json["tables"][0]["ranges"][0]["action"], "run");
}

}  // namespace
}  // namespace shapescope::analyze
