// The triage half of `analyze`: --stability, --passes, --plot/--log-m, --report (.html or
// .md), --dispatch and --verify-results. Like run_analyze, the CLI only fills a
// request; this reads the same inputs with the same options and rule.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analyze/analyze_command.hpp"

namespace shapescope::analyze {

struct TriageRequest {
  std::vector<std::string> stability;  // repeated sweeps; a file with a `pass` column gives one run per pass
  std::vector<std::string> passes;     // passes of one sweep judged together (pass_agreement.hpp)
  std::string plot_path;               // SVG
  bool log_m = false;
  std::string report_path;             // .html: self-contained page; .md: Markdown
  std::string dispatch_path;           // JSON, docs/dispatch_schema.md
  std::string verify_results_path;     // profile --verify-plans output, shown in the report
  std::size_t explain_top = 10;        // anomalies per series whose causes are printed
  // Whether run_triage has anything to do for `request` (causes are printed for any profile).
  bool any(const AnalyzeRequest& request) const;
};

// Everything about `request` and `triage` that can be checked before any work: numeric options and
// that every output file (--json, --plot, --report, --dispatch) can be written. Throws UserError.
void check_before_work(const AnalyzeRequest& request, const TriageRequest& triage);

// Prints the causes of each series' worst anomalies and writes what `triage`
// asks for. Returns the exit code; throws UserError on bad input.
int run_triage(const AnalyzeRequest& request, const TriageRequest& triage, std::ostream& out);

}  // namespace shapescope::analyze
