// `analyze --plot out.svg`: MFU over M, one line per series (kernel), its
// anomalies marked, and the effective MFU if every anomaly ran its best plan
// (same work, the plan's predicted time) as a dashed second line. Plain SVG
// written here, so the picture needs nothing to view and diffs as text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "analyze/series.hpp"

namespace shapescope::analyze {

struct PlotPoint {
  double m = 0;
  double mfu = 0;
};

struct PlotAnomaly {
  PlotPoint at;
  std::string note;  // tooltip: drop, cause, plan
};

struct PlotSeries {
  std::string label;
  std::vector<PlotPoint> measured;
  std::vector<PlotAnomaly> anomalies;
  std::vector<PlotPoint> with_best_plans;  // empty: no plans searched
};

struct PlotOptions {
  std::string title;
  bool log_m = false;
  int width = 1200;
  int height = 560;
};

// measured MFU, the findings as markers, and — when any finding has a best plan —
// the effective MFU with plans (utils × time / predicted time at planned M).
PlotSeries plot_series(const SeriesAnalysis& analysis);

// Throws UserError when there is nothing to draw or log scale meets M ≤ 0.
std::string render_mfu_svg(const std::vector<PlotSeries>& series, const PlotOptions& options);

// Escapes &, <, >, " and ' for XML text and attributes.
std::string xml_escape(const std::string& text);

}  // namespace shapescope::analyze
