// `analyze --report out.html`: one self-contained page (CSS and the SVG plot
// inline, no scripts, nothing fetched) with the anomaly tables, causes, plans,
// GPU verification, compare and stability tables.
#pragma once

#include <string>

#include "analyze/triage_report.hpp"

namespace shapescope::analyze {

std::string render_html_report(const TriageReport& report);

}  // namespace shapescope::analyze
