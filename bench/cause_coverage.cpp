// How many anomalous M have a supported cause, per profile: each anomaly's own
// explanation (explain.hpp, against the rule's reference) and the regions'
// (regions.hpp: the M where the cause of its region holds). Noise is no cause.
// Counters are used where profile --counters wrote them, beside the profile
// (<csv>.counters.csv) or in a counters/ folder beside it.
//
//   cause_coverage [--rule noise-aware|study] [--lost] [--unexplained] [--causes] PATH...
//                  (PATH: files, or folders searched for *.csv)
// --lost lists, per profile, the M that have a cause alone but lie in no region whose cause holds for them;
// --unexplained lists, per profile, the anomalous M in no region whose cause holds, with their drop and what
// ruled each cause out (against the reference of their region); --causes lists every anomalous M with the kinds of
// its causes alone, so that two builds can be compared M by M (a new mechanism must take no cause away).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "analyze/analysis.hpp"
#include "analyze/explain.hpp"
#include "analyze/regions.hpp"
#include "bench/bench_main.hpp"
#include "common/kernel_counters.hpp"
#include "common/user_error.hpp"

namespace {

using namespace shapescope::analyze;
namespace fs = std::filesystem;

std::vector<fs::path> profile_files(const std::vector<std::string>& paths) {
  std::vector<fs::path> files;
  for (const std::string& path : paths) {
    if (!fs::is_directory(path)) {
      files.emplace_back(path);
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(path)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && entry.path().extension() == ".csv" && name.find(".counters.") == std::string::npos)
        files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::optional<CountersByM> counters_of(const fs::path& profile) {
  for (const fs::path& path : {shapescope::counters_path(profile),
                               profile.parent_path() / "counters" / shapescope::counters_path(profile).filename()}) {
    if (fs::exists(path)) return shapescope::read_counters_file(path);
  }
  return std::nullopt;
}

bool has_cause(const Explanation& explanation) {
  return std::any_of(explanation.causes.begin(), explanation.causes.end(),
                     [](const Cause& cause) { return cause.kind != CauseKind::noise; });
}

int run(int argc, char** argv) {
  std::vector<std::string> paths;
  std::string rule_name = "noise-aware";
  bool list_lost = false, list_unexplained = false, list_causes = false;
  CLI::App app{"share of anomalous M with a supported cause, per profile and in all"};
  app.add_option("paths", paths, "profile CSVs or folders")->required();
  app.add_option("--rule", rule_name, "anomaly rule")->capture_default_str();
  app.add_flag("--lost", list_lost, "list the M with a cause alone that no region's cause holds for");
  app.add_flag("--causes", list_causes, "list every anomalous M with the kinds of its causes alone");
  app.add_flag("--unexplained", list_unexplained, "list the anomalous M in no region whose cause holds, and why");
  CLI11_PARSE(app, argc, argv);
  AnalysisOptions options;
  options.rule = parse_anomaly_rule(rule_name);

  std::size_t anomalies = 0, explained = 0, in_regions = 0, region_count = 0;
  fmt::print("{:<96} {:>9} {:>9} {:>9} {:>7}\n", "series", "anomalies", "explained", "in region", "regions");
  for (const fs::path& file : profile_files(paths)) {
    std::vector<Series> all;
    try {
      all = read_series_file(file.string(), {});
    } catch (const shapescope::UserError&) {
      continue;  // not a profile (a kernel bench table, a dispatch file)
    }
    const std::optional<CountersByM> counters = counters_of(file);
    for (const Series& series : all) {
      const SeriesAnalysis analysis = analyze_series(series, options, MWeights());
      if (analysis.findings.empty()) continue;
      std::vector<Anomaly> found;
      for (const Finding& finding : analysis.findings) found.push_back(finding.anomaly);
      RegionInputs inputs;
      inputs.counters = counters ? &*counters : nullptr;
      const std::vector<Region> regions = find_regions(analysis, inputs);
      std::set<std::size_t> in_a_region;
      for (const Region& region : regions)
        in_a_region.insert(region.supported_findings.begin(), region.supported_findings.end());
      std::size_t series_explained = 0;
      std::string lost;
      const std::vector<Explanation> explanations = explain_anomalies(series, found, counters ? &*counters : nullptr);
      for (std::size_t f = 0; f < explanations.size(); ++f) {
        if (list_causes) {
          std::string kinds;
          for (const Cause& cause : explanations[f].causes) kinds += (kinds.empty() ? "" : ", ") + to_string(cause.kind);
          fmt::print("  M={} of {} ({}): {}\n", found[f].m, series.name, file.string(), kinds.empty() ? "-" : kinds);
        }
        if (!has_cause(explanations[f])) continue;
        ++series_explained;
        if (!in_a_region.count(f)) lost += fmt::format(" {}", found[f].m);
      }
      const std::size_t series_in_regions = in_a_region.size();
      fmt::print("{:<96} {:>9} {:>9} {:>9} {:>7}{}\n", series.name.substr(0, 96), found.size(), series_explained,
                 series_in_regions, regions.size(), counters ? " counters" : "");
      if (list_lost && !lost.empty()) fmt::print("  with a cause alone, in no region whose cause holds:{}\n", lost);
      if (list_unexplained && series_in_regions < found.size()) {
        fmt::print("  {}\n", file.string());
        for (const Region& region : regions) {
          if (region.supported_findings.size() == region.findings.size()) continue;
          fmt::print("    {}, reference M={}: {}\n", describe_range(region), series.points[region.reference_index].m,
                     describe_cause(region));
          for (const std::size_t f : region.findings) {
            if (std::count(region.supported_findings.begin(), region.supported_findings.end(), f)) continue;
            const Anomaly& anomaly = found[f];
            fmt::print("      M={} −{:.1f}% (rule's reference M={}): {}\n", anomaly.m, 100 * anomaly.drop(),
                       anomaly.reference_m, explanations[f].summary());
          }
        }
      }
      anomalies += found.size();
      explained += series_explained;
      in_regions += series_in_regions;
      region_count += regions.size();
    }
  }
  const auto share = [&](std::size_t part) { return anomalies ? 100.0 * double(part) / double(anomalies) : 0.0; };
  fmt::print("{:<96} {:>9} {:>9} {:>9} {:>7}\n", "all", anomalies, explained, in_regions, region_count);
  fmt::print("explained alone {:.1f}%, in a region whose cause holds {:.1f}%\n", share(explained), share(in_regions));
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return shapescope::bench_main("cause_coverage", run, argc, argv); }
