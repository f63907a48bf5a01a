// `analyze --report out.html`: one self-contained page (CSS and the SVG plot
// inline, no scripts, nothing fetched) with the anomaly tables, causes, plans,
// GPU verification, compare and stability tables.
#pragma once

#include <string>

#include "analyze/capture_recommendation.hpp"
#include "analyze/triage_report.hpp"

namespace shapescope::analyze {

std::string render_html_report(const TriageReport& report);

// `analyze --capture-sizes --report out.html`: the same kind of page with the capture
// section (modules, lists against vLLM's default, engine syntax, per-size tables).
std::string render_capture_html(const CaptureRecommendation& recommendation);

}  // namespace shapescope::analyze
