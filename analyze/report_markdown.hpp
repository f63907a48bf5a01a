// `analyze --report out.md`: the triage report as GitHub Markdown for a pull
// request; the plot is linked (TriageReport::plot_path), not inlined.
#pragma once

#include <string>

#include "analyze/triage_report.hpp"

namespace shapescope::analyze {

std::string render_markdown_report(const TriageReport& report);

}  // namespace shapescope::analyze
