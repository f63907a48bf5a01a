// Random, truncated and mutated CSVs (and sidecars) through every reader — the
// analyzer's formats, multi-pass files and the profiler's own — and every
// output: both rules, the split search, study CSVs, JSON, the SVG plot, the
// HTML and Markdown reports, dispatch, compare and stability. Any outcome but
// a crash, a hang or an exception other than UserError is acceptable. Fixed
// seed and a fixed number of rounds, so every machine covers the same inputs.
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "analyze/analysis.hpp"
#include "analyze/compare.hpp"
#include "analyze/dispatch_table.hpp"
#include "analyze/explain.hpp"
#include "analyze/json_report.hpp"
#include "analyze/plot_svg.hpp"
#include "analyze/read_multipass_csv.hpp"
#include "analyze/regions.hpp"
#include "analyze/report_html.hpp"
#include "analyze/report_markdown.hpp"
#include "analyze/stability.hpp"
#include "analyze/study_outputs.hpp"
#include "analyze/triage_report.hpp"
#include "analyze_test_support.hpp"
#include "common/csv.hpp"
#include "common/json_text.hpp"
#include "common/profile_schema.hpp"
#include "common/user_error.hpp"
#include "profiler/profile_csv.hpp"

namespace shapescope::analyze {
namespace {

constexpr int kMutationRounds = 1500;
constexpr int kNoiseRounds = 100;

// The first whole rows of `file`, up to `bytes`.
std::string head_of(const std::filesystem::path& file, std::size_t bytes) {
  std::ifstream in(file, std::ios::binary);
  std::string text(bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text.substr(0, text.rfind('\n') + 1);  // whole rows only
}

std::vector<Anomaly> anomalies_of(const SeriesAnalysis& analysis) {
  std::vector<Anomaly> anomalies;
  for (const Finding& finding : analysis.findings) anomalies.push_back(finding.anomaly);
  return anomalies;
}

// Every output the analyzer can produce for `all`, rendered to strings; the study CSVs also written
// when `write_files` (each write syncs to disk, too slow for every round).
void render_everything(const std::vector<Series>& all, const testing::ScratchDir& dir, bool write_files) {
  for (const AnomalyRule rule : {AnomalyRule::noise_aware, AnomalyRule::study}) {
    AnalysisOptions options;
    options.rule = rule;
    options.check_split = true;
    std::vector<SeriesAnalysis> analyses;
    analyses.reserve(all.size());
    for (const Series& series : all) analyses.push_back(analyze_series(series, options, MWeights()));

    TriageReport report;
    report.rule = to_string(rule);
    std::vector<PlotSeries> plots;
    for (const SeriesAnalysis& analysis : analyses) {
      low_utils_csv(analysis);
      split_gemm_csv(analysis);
      json_text(series_json(analysis), 2);
      RegionInputs region_inputs;
      for (const Series& other : all) region_inputs.other_kernels.push_back(&other);
      const std::vector<Region> regions = find_regions(analysis, region_inputs);
      json_text(regions_json(regions, analysis), 2);
      report.series.push_back({&analysis, explain_anomalies(*analysis.series, anomalies_of(analysis)), regions});
      plots.push_back(plot_series(analysis));
    }
    if (write_files && !analyses.empty()) write_study_outputs(analyses.front(), dir.path() / "out", true);
    for (const bool log_m : {false, true}) {
      PlotOptions plot_options;
      plot_options.log_m = log_m;
      report.plot_svg = render_mfu_svg(plots, plot_options);
    }
    std::vector<FlaggedRun> runs;
    for (const Series& series : all) {
      runs.push_back(flag_run(series, [&](const Series& run) {
        return find_anomalies(run, options.rule, options.rule_options);
      }));
    }
    if (runs.size() >= 2) report.stability = stability_report(runs, report.rule);
    try {
      report.compare = compare_series(all, all, "a", "b", {});
      json_text(compare_json(*report.compare), 2);
    } catch (const UserError&) {  // no shared point: nothing to compare
    }
    render_html_report(report);
    render_markdown_report(report);
    std::vector<const Series*> pointers;
    for (const Series& series : all) pointers.push_back(&series);
    json_text(dispatch_json(build_dispatch_tables(pointers, options.split), options.split), 1);
  }
}

// Returns true when the input was read (and then rendered); fails the test on any non-UserError.
bool survives(const testing::ScratchDir& dir, const std::string& content, const std::string& sidecar = "",
              bool write_files = false) {
  const auto file = dir.write("fuzz.csv", content);
  std::filesystem::remove(dir.path() / "fuzz.json");
  if (!sidecar.empty()) dir.write("fuzz.json", sidecar);
  bool read = false;
  try {
    profiler::read_profile_csv(file);
  } catch (const UserError&) {
  } catch (const std::exception& error) {
    ADD_FAILURE() << "profile reader: " << error.what() << " on input:\n" << content.substr(0, 400);
  }
  try {
    const std::vector<Series> all = read_series_or_passes(file.string(), {});
    read = true;
    render_everything(all, dir, write_files);
  } catch (const UserError&) {
  } catch (const std::exception& error) {
    ADD_FAILURE() << "non-UserError exception: " << error.what() << " on input:\n" << content.substr(0, 400);
  }
  return read;
}

std::string shapescope_seed() {
  std::string text = csv::format_row(profile_columns());
  for (int m = 1; m <= 24; ++m) {
    ProfileRow row;
    row.batch = row.m = m * 8;
    row.kernel_time_us = 10 + m * (m % 5 == 0 ? 1.6 : 1.0);
    row.n = row.k = 4096;
    row.tflops = 2.0 * row.m * row.n * row.k / row.kernel_time_us / 1e6;
    row.utils = row.tflops / 1000;
    row.peak_tflops = 1000;
    row.kernel_name = m < 12 ? "tile_64x128" : "tile_128x128";
    row.kernel = "k";
    row.device = "NVIDIA H200";
    row.ci95_us = 0.1;
    row.status = m == 7 ? kStatusError : m == 9 ? kStatusThrottled : kStatusOk;
    text += csv::format_row(to_fields(row));
  }
  return text;
}

std::vector<std::string> seeds() {
  std::vector<std::string> texts = {
      "batch,kernel_time,flops,utils,kernel_name\n1,10,1,0.1,\"a,b\"\n2,9,2,0.2,x\n4,30,1,0.05,y\n8,12,6,0.6,y\n"
      "16,50,3,0.3,z\n",
      "batch,kernel_time,flops,utils\n1,10,1,0.5\n2,10,2,1e20\n3,1e-300,3,0.5\n4,10,4,-0.5\n"
      "9223372036854775807,1,1,1\n",
      "pass,batch,kernel_time,flops,utils\n1,16,10,2,0.5\n1,32,10,4,0.6\n1,48,30,2,0.2\n2,16,10,2,0.5\n2,32,10,4,0.6\n"
      "2,48,12,5,0.6\n",
      "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n"
      "gfx942,304,16,512,7168,ck,1,0,10.0,k,10.0,1,0\ngfx942,304,32,512,7168,ck,1,0,30.0,k,6.0,1,0\n"
      "gfx950,256,16,512,7168,ck,1,0,8.0,k_96x128E,12.0,1,0\n",
      shapescope_seed()};
  texts.push_back(head_of(testing::fairyspeed(testing::kRtx4090Torch251), 6000));
  texts.push_back(head_of(testing::data() / "aiter" / "a8w8_blockscale_tuned_gemm_ds_v3.csv", 6000));
  return texts;
}

const char* kSidecar =
    R"({"device": {"name": "NVIDIA H200", "multiprocessors": 132}, "problem": {"model": "m", "module": "up"}})";

TEST(InputFuzz, TruncatedInputsThroughEveryReaderAndOutput) {
  testing::ScratchDir dir;
  for (const std::string& seed : seeds()) {
    const std::size_t step = std::max<std::size_t>(1, seed.size() / 60);
    for (std::size_t length = 0; length <= seed.size(); length += step) {
      survives(dir, seed.substr(0, length), std::string(kSidecar).substr(0, length), length == seed.size());
    }
  }
}

TEST(InputFuzz, MutatedAndRandomInputsThroughEveryReaderAndOutput) {
  testing::ScratchDir dir;
  std::mt19937 random(7);
  const std::string alphabet = ",\"\n\r0123456789.-eE+naif xyz\t_";
  const std::vector<std::string> tokens = {"1e20", "1e-300", "nan", "inf", "-1", "0", "9223372036854775807",
                                           "-9223372036854775808", "1e308", "\"\"", "\n", ",,", "ok", "throttled"};
  std::size_t rounds = 0, accepted = 0;
  const std::vector<std::string> texts = seeds();
  for (; rounds < kMutationRounds; ++rounds) {
    std::string text = texts[rounds % texts.size()];
    std::string sidecar = kSidecar;
    const int edits = 1 + static_cast<int>(random() % 8);
    for (int edit = 0; edit < edits && !text.empty(); ++edit) {
      // Mostly the rows: a broken header only exercises the format detection.
      const std::size_t body = random() % 4 == 0 ? 0 : std::min(text.find('\n') + 1, text.size() - 1);
      const std::size_t at = body + random() % (text.size() - body);
      switch (random() % 5) {
        case 0: text[at] = alphabet[random() % alphabet.size()]; break;
        case 1: text.erase(at, 1 + random() % 4); break;
        case 2: text.insert(at, tokens[random() % tokens.size()]); break;
        case 3: {  // a whole field replaced: extreme but well-formed values reach the analysis
          const std::size_t separator = text.find_last_of(",\n", at);
          const std::size_t begin = separator == std::string::npos ? 0 : separator + 1;
          const std::size_t end = std::min(text.find_first_of(",\n", at), text.size());
          if (begin <= end) text.replace(begin, end - begin, tokens[random() % tokens.size()]);
          break;
        }
        default: text.insert(at, 1, static_cast<char>(random() % 256));
      }
      if (random() % 4 == 0) sidecar[random() % sidecar.size()] = alphabet[random() % alphabet.size()];
    }
    accepted += survives(dir, text, sidecar, rounds % 50 == 0);
  }
  for (int round = 0; round < kNoiseRounds; ++round) {
    std::string noise(random() % 512, '\0');
    for (char& c : noise) c = static_cast<char>(random() % 256);
    survives(dir, noise);
  }
  RecordProperty("rounds", static_cast<int>(rounds));
  RecordProperty("accepted", static_cast<int>(accepted));
  EXPECT_GT(accepted, rounds / 20) << "most mutations were rejected: the outputs were hardly exercised";
}

}  // namespace
}  // namespace shapescope::analyze
