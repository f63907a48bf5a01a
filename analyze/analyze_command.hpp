// The `analyze` command as a library call: the CLI only fills an AnalyzeRequest,
// so a new option is a field here and a step in run_analyze.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"
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
  std::vector<std::string> compare;       // empty, or two profiles: A then B
  CompareOptions compare_options;
};

// Throws UserError, one line naming the option and its range, on a NaN, infinite or out-of-range number.
void check_numeric_options(const AnalyzeRequest& request);

// Runs the request, printing the summary to `out`; returns the exit code.
// Throws UserError on bad input (check_numeric_options included).
int run_analyze(const AnalyzeRequest& request, std::ostream& out);

}  // namespace shapescope::analyze
