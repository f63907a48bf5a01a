// The adaptive M search against recorded exhaustive profiles: each file is replayed
// (profile --replay FILE --m-search adaptive), both profiles are analyzed (noise-aware
// rule, split plans), and a table says per file how many points the search measured and how
// many of the exhaustive analysis's anomalous M and split plans it found. An M counts as found
// when the adaptive analysis flags an anomaly within one grid step of it; a plan (predicted
// gain of 10% or more: the split search's bar) when such an anomaly has a plan too; a region of the exhaustive
// analysis when a region of the adaptive one overlaps it (analyze/search_recall.hpp).
//
//   adaptive_replay [FILE|FOLDER ...] [--out DIR] [--check] [--measured DIR]
// --measured DIR: no replay; each exhaustive file is compared with the adaptive profile of the same name in DIR,
// measured on a device by `profile --m-search adaptive` (the same build and GPU as the exhaustive run, for a
// comparison that means anything).
// Folders are searched for exhaustive profiles: at least 500 M values, 90% of their gaps one step.
// Default: data/ and profiles/ of the source tree. --check exits 1 unless every file meets the
// targets: 95% of anomalous M, every plan, at most 15% of the points on grids of 4,000 M or more
// and 25% on shorter ones.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analyze/analysis.hpp"
#include "analyze/search_recall.hpp"
#include "bench/bench_main.hpp"
#include "profiler/replay.hpp"

namespace {

using namespace shapescope;
namespace fs = std::filesystem;

constexpr double kFoundTarget = 0.95;
constexpr double kLongGridShare = 0.15, kShortGridShare = 0.25;
constexpr std::size_t kLongGrid = 4000;

// At least 500 M values, nine gaps in ten of one size.
bool is_exhaustive(const profiler::RecordedProfile& recorded) {
  const std::vector<int64_t> ms = recorded.m_values();
  if (ms.size() < 500) return false;
  std::map<int64_t, std::size_t> gaps;
  for (std::size_t i = 1; i < ms.size(); ++i) ++gaps[ms[i] - ms[i - 1]];
  std::size_t most = 0;
  for (const auto& [gap, count] : gaps) most = std::max(most, count);
  return double(most) >= 0.9 * double(ms.size() - 1);
}

std::vector<fs::path> exhaustive_profiles(const std::vector<std::string>& inputs) {
  std::vector<fs::path> files;
  for (const std::string& input : inputs) {
    if (!fs::is_directory(input)) {
      files.push_back(input);
      continue;
    }
    std::vector<fs::path> found;
    for (const auto& entry : fs::recursive_directory_iterator(input))
      if (entry.is_regular_file() && entry.path().extension() == ".csv") found.push_back(entry.path());
    std::sort(found.begin(), found.end());
    for (const fs::path& path : found) {
      try {
        if (is_exhaustive(profiler::read_recorded_profile(path))) files.push_back(path);
      } catch (const UserError&) {  // not a profile (counters, tables): not replayed
      }
    }
  }
  return files;
}

struct Tally {
  std::size_t grid = 0, points = 0;
  analyze::SearchRecall recall;
  double share() const { return grid ? double(points) / double(grid) : 0; }
  bool met() const {
    const double budget = grid >= kLongGrid ? kLongGridShare : kShortGridShare;
    return share() <= budget && double(recall.anomalies_found) >= kFoundTarget * double(recall.anomalies) &&
           recall.plans_found == recall.plans;
  }
};

std::vector<analyze::SeriesAnalysis> analyze_file(const std::vector<analyze::Series>& series) {
  analyze::AnalysisOptions options;
  options.check_split = true;
  std::vector<analyze::SeriesAnalysis> analyses;
  for (const analyze::Series& one : series) analyses.push_back(analyze::analyze_series(one, options, {}));
  return analyses;
}

void print_row(const std::string& name, const Tally& tally, const std::string& verdict) {
  const analyze::SearchRecall& r = tally.recall;
  fmt::print("{:<80} {:>6} {:>6} {:>5.1f}% {:>5}/{:<5} {:>9} {:>3}/{:<3} {:>3}/{:<3}  {}\n", name, tally.grid,
             tally.points, 100 * tally.share(), r.anomalies_found, r.anomalies, r.anomalies_near_measured,
             r.plans_found, r.plans, r.regions_found, r.regions, verdict);
}

int run(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string out = (fs::temp_directory_path() / "shapescope_adaptive_replay").string();
  bool check = false;
  CLI::App app{"adaptive_replay: the adaptive M search replayed on recorded exhaustive profiles"};
  app.add_option("inputs", inputs, "profiles or folders (default: the source tree's data/ and profiles/)");
  app.add_option("--out", out, "where the adaptive profiles are written")->capture_default_str();
  app.add_flag("--check", check, "exit 1 unless every file meets the targets");
  bool list_missed = false;
  app.add_flag("--missed", list_missed, "list the anomalous M each file's search missed");
  std::string measured;
  app.add_option("--measured", measured,
                 "compare with the adaptive profiles of the same names in this folder instead of replaying")
      ->check(CLI::ExistingDirectory);
  CLI11_PARSE(app, argc, argv);
  if (inputs.empty()) inputs = {SHAPESCOPE_SOURCE_DIR "/data", SHAPESCOPE_SOURCE_DIR "/profiles"};

  const std::vector<fs::path> files = exhaustive_profiles(inputs);
  fmt::print("{:<80} {:>6} {:>6} {:>6} {:>11} {:>9} {:>7} {:>7}  {}\n", "file", "grid", "points", "%", "anomalous M",
             "measured", "plans", "regions", "targets");
  Tally all;
  std::size_t missed = 0, analyzed = 0;
  for (const fs::path& file : files) {
    // Same-named files of different folders must not overwrite each other's replay.
    const fs::path out_dir = fs::path(out) / std::to_string(std::hash<std::string>{}(file.parent_path().string()));
    fs::path adaptive_csv;
    std::size_t adaptive_points = 0;
    if (measured.empty()) {
      profiler::ReplayRequest request;
      request.recorded = file;
      request.out_dir = out_dir;
      request.search.mode = profiler::MSearch::adaptive;
      const profiler::ReplayResult replay = profiler::run_replay(request);
      adaptive_csv = replay.csv;
      adaptive_points = std::size_t(replay.points);
    } else {
      adaptive_csv = fs::path(measured) / file.filename();
      if (!fs::exists(adaptive_csv)) {
        fmt::print("{:<80} no adaptive profile {}\n", file.string(), adaptive_csv.string());
        continue;
      }
      adaptive_points = profiler::read_recorded_profile(adaptive_csv).m_values().size();
    }
    // The candidates: every M of the file the kernel runs (an unsupported one is known without measuring).
    const profiler::RecordedProfile recorded = profiler::read_recorded_profile(file);
    std::vector<int64_t> grid;
    for (int64_t m : recorded.m_values())
      if (!recorded.unsupported.count(m)) grid.push_back(m);

    analyze::ReadOptions read;
    std::vector<analyze::Series> exhaustive_series;
    try {
      exhaustive_series = analyze::read_series_file(file.string(), read);
    } catch (const UserError& error) {  // e.g. a profile whose every row failed: nothing to analyze
      fmt::print("{:<80} not analyzable: {}\n", file.string(), error.what());
      continue;
    }
    const std::vector<analyze::Series> adaptive_series = analyze::read_series_file(adaptive_csv.string(), read);
    const auto exhaustive = analyze_file(exhaustive_series), adaptive = analyze_file(adaptive_series);
    Tally tally;
    tally.grid = grid.size();
    tally.points = adaptive_points;
    for (std::size_t i = 0; i < exhaustive.size() && i < adaptive.size(); ++i)
      tally.recall += analyze::search_recall(exhaustive[i], adaptive[i], grid);
    const fs::path shown = fs::relative(file, SHAPESCOPE_SOURCE_DIR).string().rfind("..", 0) == 0
                               ? file
                               : fs::relative(file, SHAPESCOPE_SOURCE_DIR);
    print_row(shown.string(), tally, tally.met() ? "met" : "MISSED");
    ++analyzed;
    if (list_missed && !tally.recall.missed.empty()) fmt::print("  missed M: {}\n", fmt::join(tally.recall.missed, " "));
    if (list_missed && !tally.recall.missed_plans.empty())
      fmt::print("  missed plans at M: {}\n", fmt::join(tally.recall.missed_plans, " "));
    missed += !tally.met();
    all.grid += tally.grid;
    all.points += tally.points;
    all.recall += tally.recall;
  }
  print_row("all", all, fmt::format("{} of {} files met the targets", analyzed - missed, analyzed));
  if (analyzed == 0) {
    fmt::print(stderr, "adaptive_replay: no exhaustive profile found\n");
    return 1;
  }
  return check && missed > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return bench_main("adaptive_replay", run, argc, argv); }
