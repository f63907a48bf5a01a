// The `analyze` command as a library call: the CLI only fills an AnalyzeRequest,
// so a new option is a field here and a step in run_analyze.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"
#include "analyze/regions.hpp"
#include "analyze/series.hpp"

namespace shapescope::analyze {

struct AnalyzeRequest {
  std::vector<std::string> inputs;        // profiles to analyze
  ReadOptions read;
  AnalysisOptions analysis;
  std::string m_weights_path;             // "" = uniform over the sweep
  std::filesystem::path out_dir = "analysis";  // study-format CSVs go here
  std::string json_path;                  // "" = no JSON report
  std::size_t top_n = 10;
  bool explain_with_counters = false;     // also read `<csv>.counters.csv` (profile --counters) as evidence
  std::vector<std::string> compare;       // empty, or two profiles: A then B
  CompareOptions compare_options;
};

// Throws UserError, one line naming the option and its range, on a NaN, infinite or out-of-range number.
void check_numeric_options(const AnalyzeRequest& request);

// The regions of one analysis, with the other profiles read (`all`) as other kernels and, with
// --explain-with-counters, the counters beside the profile.
std::vector<Region> regions_of(const SeriesAnalysis& analysis, const std::vector<Series>& all, const MWeights& weights,
                               const AnalyzeRequest& request);

// Runs the request, printing the summary to `out`; returns the exit code.
// Throws UserError on bad input (check_numeric_options included).
int run_analyze(const AnalyzeRequest& request, std::ostream& out);

}  // namespace shapescope::analyze
