#include "analyze/analyze_command.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "analyze/json_report.hpp"
#include "analyze/layout_plans.hpp"
#include "analyze/profile_counters.hpp"
#include "analyze/regions.hpp"
#include "analyze/study_outputs.hpp"
#include "analyze/terminal_summary.hpp"
#include "common/atomic_file.hpp"
#include "common/json_text.hpp"
#include "common/option_checks.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

void check_numeric_options(const AnalyzeRequest& request) {
  const double utils_ratio = request.analysis.rule_options.utils_ratio;
  require_number("--utils-ratio", utils_ratio, utils_ratio > 0 && utils_ratio <= 1, "above 0 and at most 1");
  const SplitOptions& split = request.analysis.split;
  require_number("--split-ratio", split.split_ratio, split.split_ratio > 0 && split.split_ratio <= 1,
                 "above 0 and at most 1");
  if (split.max_parts < 1 || split.max_parts > 16) {
    throw UserError(fmt::format("--max-parts {}: give 1 to 16 launches", split.max_parts));
  }
  require_number("--launch-overhead-us", split.launch_overhead_us,
                 split.launch_overhead_us >= 0 && split.launch_overhead_us <= 1e6, "from 0 to 1e6 us");
  const double tie_band = request.compare_options.tie_band;
  require_number("--tie-band", tie_band, tie_band >= 0 && tie_band <= 1, "from 0 to 1");
  const double peak = request.read.peak_tflops_override;
  require_number("--peak-tflops", peak, peak >= 0 && peak <= 1e6, "from 0 (the file's peak) to 1e6 TFLOP/s");
}

std::vector<Region> regions_of(const SeriesAnalysis& analysis, const std::vector<Series>& all, const MWeights& weights,
                               const AnalyzeRequest& request) {
  RegionInputs inputs;
  inputs.weights = &weights;
  inputs.split_ratio = request.analysis.split.split_ratio;
  for (const Series& other : all) inputs.other_kernels.push_back(&other);
  CountersByM counters;
  if (request.explain_with_counters) {
    counters = counters_beside(analysis.series->source);
    inputs.counters = &counters;
  }
  return find_regions(analysis, inputs);
}

int run_analyze(const AnalyzeRequest& request, std::ostream& out) {
  check_numeric_options(request);
  if (request.inputs.empty() && request.compare.empty()) {
    throw UserError("no input; pass a profile CSV, or --compare A.csv B.csv");
  }
  if (!request.compare.empty() && request.compare.size() != 2) {
    throw UserError("--compare takes exactly two profiles: A.csv B.csv");
  }
  const MWeights weights = request.m_weights_path.empty() ? MWeights() : MWeights::read(request.m_weights_path);

  nlohmann::json report = {{"tool", "shapescope analyze"},
                           {"options", analysis_options_json(request.analysis)},
                           {"m_weights", request.m_weights_path},
                           {"series", nlohmann::json::array()}};
  // Every input first: a grouped profile's layout plans come from the other profiles given.
  std::vector<Series> all;
  for (const std::string& input : request.inputs) {
    for (Series& series : read_series_file(input, request.read)) all.push_back(std::move(series));
  }
  for (const Series& series : all) {
    const SeriesAnalysis analysis = analyze_series(series, request.analysis, weights);
    // Written before the summary is printed: a folder that cannot be written is then the only output.
    const auto written = write_study_outputs(analysis, request.out_dir, request.analysis.check_split);
    const std::vector<Region> regions = regions_of(analysis, all, weights, request);
    print_series_summary(out, analysis, request.analysis, request.top_n, regions);
    nlohmann::json series_report = series_json(analysis);
    series_report["regions"] = regions_json(regions, analysis);
    if (series.grouped && request.analysis.check_split) {
      const std::vector<LayoutPlan> plans = find_layout_plans(analysis, all, request.analysis.split.split_ratio);
      print_layout_plans(out, analysis, plans, request.top_n);
      series_report["layout_plans"] = layout_plans_json(plans);
    }
    for (const auto& path : written) fmt::print(out, "  wrote {}\n", path.string());
    report["series"].push_back(std::move(series_report));
  }

  if (request.compare.size() == 2) {
    const std::vector<Series> a = read_series_file(request.compare[0], request.read);
    const std::vector<Series> b = read_series_file(request.compare[1], request.read);
    const auto label = [](const std::string& path) { return std::filesystem::path(path).filename().string(); };
    const CompareResult result =
        compare_series(a, b, label(request.compare[0]), label(request.compare[1]), request.compare_options);
    print_compare_summary(out, result, request.top_n);
    report["compare"] = compare_json(result);
  }

  if (!request.json_path.empty()) {
    write_file_atomically(request.json_path, json_text(report, 2));
    fmt::print(out, "wrote {}\n", request.json_path);
  }
  return 0;
}

}  // namespace shapescope::analyze
