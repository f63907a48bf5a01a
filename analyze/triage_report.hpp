// Everything a triage review shows, gathered once and rendered twice:
// report_html.hpp (one self-contained page) and report_markdown.hpp (for pull requests).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"
#include "analyze/explain.hpp"
#include "analyze/regions.hpp"
#include "analyze/stability.hpp"
#include "common/verify_results.hpp"

namespace shapescope::analyze {

struct SeriesTriage {
  const SeriesAnalysis* analysis = nullptr;  // must outlive the report
  std::vector<Explanation> explanations;     // parallel to analysis->findings
  std::vector<Region> regions;               // sorted by impact
};

struct TriageReport {
  std::string title = "shapescope triage";
  std::string rule;                 // the anomaly rule that decided
  std::vector<SeriesTriage> series;
  std::string plot_svg;             // inline in HTML; "" for none
  std::string plot_path;            // linked from Markdown; "" for none
  std::optional<VerifyResults> verify;
  std::optional<CompareResult> compare;
  std::optional<StabilityReport> stability;
  std::size_t row_limit = 50;       // anomaly rows per series, worst drops first
};

// One row of a series' anomaly table, already formatted.
struct AnomalyRow {
  std::string m, mfu, reference, drop, causes, plan, verified;
};

// One row of a series' region table, already formatted.
struct RegionRow {
  std::string range, drop, cause, remedy, lost;
};

// The first `row_limit` regions (largest impact first) and how many were left out.
std::vector<RegionRow> region_rows(const SeriesTriage& triage, std::size_t row_limit, std::size_t& left_out);

// The worst `row_limit` findings of one series (largest drop first) and how many were left out.
std::vector<AnomalyRow> anomaly_rows(const SeriesTriage& triage, const std::optional<VerifyResults>& verify,
                                     std::size_t row_limit, std::size_t& left_out);

// "k_way 1088+1092 → 1795.0 µs (−14.8%)", or "none" when no plan beat the bar.
std::string describe_plan(const Finding& finding);

}  // namespace shapescope::analyze
