// What a person reads after `analyze`: per series the counts, the worst drops
// with their best plans, and the recoverable time; for --compare the headline
// and the per-group and per-shape multipliers.
#pragma once

#include <ostream>

#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"
#include "analyze/layout_plans.hpp"
#include "analyze/regions.hpp"

namespace shapescope::analyze {

// Regions (sorted by impact) lead the anomalies; at most top_n of each are listed.
void print_series_summary(std::ostream& out, const SeriesAnalysis& analysis, const AnalysisOptions& options,
                          std::size_t top_n, const std::vector<Region>& regions);
void print_compare_summary(std::ostream& out, const CompareResult& result, std::size_t top_n);
// Grouped series: how many anomalies another layout of the same experts runs faster, and the largest gains.
void print_layout_plans(std::ostream& out, const SeriesAnalysis& analysis, const std::vector<LayoutPlan>& plans,
                        std::size_t top_n);

}  // namespace shapescope::analyze
