// Structured mutations of small valid inputs — a shapescope profile with every optional column (probed clocks,
// tiles, split-K, bandwidth, power cap) and its sidecar, a grouped profile, a study CSV of the data folder, a
// Hugging Face config — through the public entry points: the whole analyze pipeline (causes, regions, split
// search, summary and JSON report), the replay backend with the adaptive search, the profile reader and the HF
// config reader; and the nastiest of them through the `analyze` and `profile --replay` CLIs. Every input must end
// in a result or a UserError (exit 2 and one line at the CLI): never a crash, a hang, a sanitizer report or
// another exception. Columns are dropped, duplicated, swapped; rows truncated, repeated, reordered, reduced to
// one or none; fields replaced by NaN, infinities, negative, zero and huge numbers; kernel names by tile strings
// that overflow or hold zeros, by names of hundreds of kilobytes and by bytes that are not UTF-8; line ends
// turned to CRLF. Fixed seeds and a fixed number of rounds, so every machine covers the same inputs.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analyze/analyze_command.hpp"
#include "analyze/explain.hpp"
#include "common/csv.hpp"
#include "common/kernel_counters.hpp"
#include "common/model_catalog.hpp"
#include "common/profile_schema.hpp"
#include "common/user_error.hpp"
#include "profiler/adaptive_search.hpp"
#include "profiler/profile_csv.hpp"
#include "profiler/replay.hpp"
#include "tests/analyze_cli_support.hpp"
#include "tests/profile_cli_support.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/test_data.hpp"

namespace shapescope {
namespace {

namespace fs = std::filesystem;
using testing_support::ScratchDir;

constexpr int kRoundsPerSeed = 120;
// Far above what any of these small inputs takes under the sanitizers: a slower one loops on its data.
constexpr double kSecondsPerInput = 20;

const std::vector<std::string> kExtremeNumbers = {"nan", "-nan", "inf", "-inf", "-1", "0", "-0", "1e308", "-1e308",
                                                  "1e-320", "9223372036854775807", "-9223372036854775808",
                                                  "18446744073709551616", "4611686018427387905", "1099511627776", ""};

std::vector<std::string> odd_kernel_names() {
  return {"sm90_xmma_gemm_tilesize0x0x0_nn",
          "sm90_xmma_gemm_tilesize99999999999x128x64_nn",
          "sm90_xmma_gemm_tilesize999999x999999x1_tn",
          "cutlass_80_tensorop_gemm_128x0_32x3_nn_align8",
          "cutlass_80_tensorop_gemm_0x128_32x3_tn",
          "gemm_9223372036854775807x9223372036854775807_nn",
          "gemm_4611686018427387904x16",
          "ck_256x0x128x64_intrawave",
          "ck_1x9223372036854775807x1x1",
          "ck_256x1x1x1",
          "gemm_cktile_0x0x0_k",
          "gemm_cktile_9223372036854775807x1x1",
          "ws_m0n0k0",
          "ws_m999999n999999k128",
          "cublasLt algo=66 tile=0x0 stages=3",
          "cublasLt algo=66 tile=99999999999999999999x16",
          "a8w8_BpreShuffle_0x0E",
          "kernel_grid" + std::string(50000, '7') + "+pdl",
          std::string(300000, 'a'),
          "k_" + std::string(100000, '1') + "x" + std::string(100000, '2') + "_nn",
          "Kernel<" + std::string(80000, 'T') + ">",
          "tile_\xff\xfe\xc3_128x64\x80",
          "x",
          ""};
}

// A parsed CSV to mutate column- and row-wise.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  int column(const std::string& name) const {
    const auto at = std::find(header.begin(), header.end(), name);
    return at == header.end() ? -1 : int(at - header.begin());
  }
  std::string text() const {
    std::string out = csv::format_row(header);
    for (const auto& row : rows) out += csv::format_row(row);
    return out;
  }
};

Table table_of(const std::string& text) {
  const csv::Table parsed = csv::parse(text, "seed");
  return {parsed.header, parsed.rows};
}

// A dense shapescope profile over M = 16..1024 on an H100 with every optional column: kernel names in cuBLAS's,
// xmma's and CK's tile spellings, a kernel switch, a dip of the probed clock, wave steps, power-capped time.
std::string shapescope_seed() {
  std::string text = csv::format_row(profile_columns());
  const std::vector<std::string> names = {"cublasLt algo=66 tile=128x64 stages=4",
                                          "sm90_xmma_gemm_tilesize128x256x64_nn", "ck_256x128x128x64_intrawave",
                                          "own_ws_m128n256k128_grid132+pdl"};
  for (int64_t m = 16; m <= 1024; m += 16) {
    ProfileRow row;
    row.batch = row.m = m;
    row.n = 4096;
    row.k = 7168;
    const double tiles = double((m + 127) / 128) * 32;
    const double waves = std::ceil(tiles / 132);
    row.kernel_time_us = 4 + 3 * waves * (m % 160 == 0 ? 1.4 : 1.0);
    row.tflops = 2.0 * double(m) * 4096 * 7168 / row.kernel_time_us / 1e6;
    row.peak_tflops = 989.4;
    row.utils = row.tflops / row.peak_tflops;
    row.kernel_name = names[std::size_t(m / 256) % names.size()];
    row.kernel = "cublaslt_fp8";
    row.dtype = "fp8";
    row.backend = "cuda";
    row.device = "NVIDIA H100 80GB HBM3";
    row.time_us_min = row.kernel_time_us * 0.97;
    row.time_us_max = row.kernel_time_us * (m == 480 ? 1.6 : 1.05);
    row.time_us_stddev = row.kernel_time_us * 0.01;
    row.ci95_us = row.kernel_time_us * 0.005;
    row.samples = 50;
    row.gbytes_per_s = (double(m) * 7168 + 4096.0 * 7168 + double(m) * 4096 * 2) / row.kernel_time_us / 1e3;
    row.sm_clock_mhz = 1980;
    row.sm_clock_end_mhz = m == 640 ? 1500 : 1980;
    row.sm_clock_sampled_min_mhz = m == 800 ? 1200 : 1970;
    row.sm_clock_sampled_mean_mhz = m == 800 ? 1400 : 1975;
    row.power_capped_pct = m == 960 ? 60 : 1;
    row.power_limit_w = 700;
    if (m % 64 == 0) {
      row.tile_m = 128;
      row.tile_n = 256;
      row.split_k = m < 256 ? 2 : 1;
    }
    row.status = m == 336 ? kStatusThrottled : m == 352 ? kStatusError : kStatusOk;
    text += csv::format_row(to_fields(row));
  }
  return text;
}

// A grouped GEMM profile: experts' rows, padded rows and the busiest expert's, one routing and layout.
std::string grouped_seed() {
  std::vector<std::string> header = profile_columns();
  const std::vector<std::string> grouped = grouped_profile_columns();
  header.insert(header.end(), grouped.begin(), grouped.end());
  std::string text = csv::format_row(header);
  for (int64_t m = 8; m <= 512; m += 8) {
    ProfileRow row;
    row.batch = row.m = m;
    row.n = 2048;
    row.k = 7168;
    row.batch_count = 8;
    row.kernel_time_us = 20 + double(m) / 8 * (m % 96 == 0 ? 1.5 : 1.0);
    row.tflops = 2.0 * double(m) * 8 * 2048 * 7168 / row.kernel_time_us / 1e6;
    row.peak_tflops = 1978.9;
    row.utils = row.tflops / row.peak_tflops;
    row.kernel_name = "grouped_m64n128k128";
    row.kernel = "grouped_fp8";
    row.device = "NVIDIA H200";
    row.gbytes_per_s = 8 * 2048 * 7168 / row.kernel_time_us / 1e3;
    ProfileRow::Grouped groups;
    groups.groups = 8;
    groups.active_groups = 8;
    groups.useful_rows = m * 8;
    groups.executed_rows = ((m + 63) / 64) * 64 * 8 + (m % 96 == 0 ? 512 : 0);
    groups.padded_rows = groups.executed_rows - groups.useful_rows;
    groups.rows_min = m / 2;
    groups.rows_max = m * 2;
    groups.rows_mean = double(m);
    groups.routing = "lognormal:1.5";
    groups.layout = "contiguous:64";
    groups.ep = 8;
    std::vector<std::string> fields = to_fields(row), extra = to_grouped_fields(groups);
    fields.insert(fields.end(), extra.begin(), extra.end());
    text += csv::format_row(fields);
  }
  return text;
}

std::string file_text(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path, std::ios::binary).rdbuf();
  return text.str();
}

// The hardware counters of the shapescope seed's M (profile --counters), as analyze --explain-with-counters reads them.
std::string counters_seed() {
  std::vector<KernelCounters> rows;
  for (int64_t m = 16; m <= 1024; m += 16) {
    KernelCounters counters;
    counters.m = m;
    counters.duration_us = 10;
    counters.dram_read_bytes = double(m) * 7168 * (m % 160 == 0 ? 3 : 1);
    counters.dram_write_bytes = double(m) * 4096 * 2;
    counters.min_bytes = double(m) * 7168 + double(m) * 4096 * 2;
    counters.sm_active_pct = m % 320 == 0 ? 50 : 95;
    counters.achieved_occupancy_pct = 40;
    counters.kernels = {"gemm"};
    if (m % 480 == 0) counters.kernels.push_back("splitk_reduce");
    rows.push_back(counters);
  }
  const ScratchDir dir;
  write_counters_file(dir.path() / "seed.counters.csv", rows);
  return file_text(dir.path() / "seed.counters.csv");
}

// The header and the first `rows` rows of a study CSV of the data folder.
std::string study_seed(const fs::path& file, std::size_t rows) {
  std::istringstream in(file_text(file));
  std::string line, text;
  for (std::size_t i = 0; i <= rows && std::getline(in, line);) {
    if (line.empty()) continue;
    text += line + "\n";
    ++i;
  }
  return text;
}

const char* kSidecar = R"({"device": {"name": "NVIDIA H100 80GB HBM3", "multiprocessors": 132},
 "problem": {"model": "m", "module": "up", "tp": 1}})";

template <typename Pick>
std::size_t pick(std::mt19937& random, const Pick& choices) {
  return std::size_t(random() % choices.size());
}

// One structured edit of `table`.
void mutate(Table& table, std::mt19937& random) {
  if (table.header.empty()) return;
  const std::size_t column = pick(random, table.header);
  const auto each_row = [&](const std::function<void(std::vector<std::string>&)>& edit) {
    for (auto& row : table.rows) edit(row);
  };
  const int m_column = std::max({table.column("batch"), table.column("M"), table.column("m")});
  switch (random() % 16) {
    case 0:  // one field an extreme number
      if (!table.rows.empty()) {
        auto& row = table.rows[pick(random, table.rows)];
        if (column < row.size()) row[column] = kExtremeNumbers[pick(random, kExtremeNumbers)];
      }
      break;
    case 1: {  // a whole column one extreme number
      const std::string value = kExtremeNumbers[pick(random, kExtremeNumbers)];
      each_row([&](auto& row) { if (column < row.size()) row[column] = value; });
      break;
    }
    case 2: {  // kernel names with odd tile strings
      const int at = table.column("kernel_name");
      const std::vector<std::string> names = odd_kernel_names();
      if (at < 0 || table.rows.empty()) break;
      if (random() % 2) {
        table.rows[pick(random, table.rows)][std::size_t(at)] = names[pick(random, names)];
      } else {
        const std::string name = names[pick(random, names)];
        each_row([&](auto& row) { if (std::size_t(at) < row.size()) row[std::size_t(at)] = name; });
      }
      break;
    }
    case 3:  // a column dropped
      table.header.erase(table.header.begin() + long(column));
      each_row([&](auto& row) { if (column < row.size()) row.erase(row.begin() + long(column)); });
      break;
    case 4:  // a column duplicated
      table.header.push_back(table.header[column]);
      each_row([&](auto& row) { if (column < row.size()) row.push_back(row[column]); });
      break;
    case 5:  // two columns' names swapped: each column read as the other
      std::swap(table.header[column], table.header[pick(random, table.header)]);
      break;
    case 6:  // rows reordered
      std::shuffle(table.rows.begin(), table.rows.end(), random);
      break;
    case 7:  // rows repeated
      if (!table.rows.empty()) {
        const auto row = table.rows[pick(random, table.rows)];
        table.rows.insert(table.rows.begin() + long(pick(random, table.rows)), 1 + random() % 5, row);
      }
      break;
    case 8:  // one row, two rows, or none
      table.rows.resize(std::min<std::size_t>(table.rows.size(), random() % 3));
      break;
    case 9:  // every M the same, or M = 0, or an M far beyond the rest
      if (m_column < 0 || table.rows.empty()) break;
      if (random() % 3 == 0) {
        each_row([&](auto& row) { if (std::size_t(m_column) < row.size()) row[std::size_t(m_column)] = "64"; });
      } else {
        auto& row = table.rows[pick(random, table.rows)];
        if (std::size_t(m_column) < row.size()) row[std::size_t(m_column)] = random() % 2 ? "0" : "9223372036854775807";
      }
      break;
    case 10: {  // N and K beyond any model: M·N·K overflows int64
      for (const char* name : {"n", "k", "N", "K"}) {
        const int at = table.column(name);
        if (at < 0) continue;
        const std::string value = random() % 2 ? "9223372036854775807" : "4294967296";
        each_row([&](auto& row) { if (std::size_t(at) < row.size()) row[std::size_t(at)] = value; });
      }
      break;
    }
    case 11:  // a row cut short
      if (!table.rows.empty()) {
        auto& row = table.rows[pick(random, table.rows)];
        if (!row.empty()) row.resize(random() % row.size());
      }
      break;
    case 12: {  // times of zero, or every row another status
      const int time = table.column("kernel_time");
      const int status = table.column("status");
      if (status >= 0 && random() % 2) {
        const char* statuses[] = {"skipped", "error", "unsupported", "throttled", "ok", "bogus"};
        const std::string value = statuses[random() % 6];
        each_row([&](auto& row) { if (std::size_t(status) < row.size()) row[std::size_t(status)] = value; });
      } else if (time >= 0) {
        each_row([&](auto& row) { if (std::size_t(time) < row.size()) row[std::size_t(time)] = "0"; });
      }
      break;
    }
    case 13: {  // tiles, split-K, groups and rows from the extremes
      for (const char* name : {"tile_m", "tile_n", "split_k", "groups", "useful_rows", "executed_rows", "rows_max",
                               "batch_count", "sm_clock_sampled_mean_mhz", "sm_clock_sampled_min_mhz", "gbytes_per_s",
                               "power_capped_pct"}) {
        const int at = table.column(name);
        if (at < 0 || random() % 3) continue;
        const std::string value = kExtremeNumbers[pick(random, kExtremeNumbers)];
        each_row([&](auto& row) { if (std::size_t(at) < row.size()) row[std::size_t(at)] = value; });
      }
      break;
    }
    case 14:  // M in descending order
      std::reverse(table.rows.begin(), table.rows.end());
      break;
    default:  // the header alone kept, or emptied
      if (random() % 2) table.rows.clear();
      else table.header.clear(), table.rows.clear();
  }
}

// The mutated text, sometimes with CRLF line ends or cut at a byte.
std::string serialized(const Table& table, std::mt19937& random) {
  std::string text = table.header.empty() ? "" : table.text();
  if (random() % 8 == 0) {
    std::string crlf;
    for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    text = std::move(crlf);
  }
  if (random() % 10 == 0 && !text.empty()) text.resize(random() % text.size());
  return text;
}

std::string mutated_sidecar(std::mt19937& random) {
  nlohmann::json sidecar = nlohmann::json::parse(kSidecar);
  switch (random() % 5) {
    case 0: sidecar["device"]["multiprocessors"] = std::vector<int64_t>{0, -1, INT64_MAX, 1}[random() % 4]; break;
    case 1: sidecar["device"]["name"] = "NVIDIA A100-SXM4-80GB"; break;
    case 2: return "{";
    case 3: return "";
    default: break;
  }
  return sidecar.dump();
}

// Runs `work`; fails the test on any exception but UserError, or on a run past kSecondsPerInput.
bool survives(const std::string& what, const std::string& input, const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  bool done = false;
  try {
    work();
    done = true;
  } catch (const UserError&) {
  } catch (const std::exception& error) {
    ADD_FAILURE() << what << ": " << typeid(error).name() << ": " << error.what() << " on input:\n"
                  << input.substr(0, 600);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, kSecondsPerInput) << what << " on input:\n" << input.substr(0, 600);
  return done;
}

// Every entry point a profile CSV reaches: the profile reader, the analyze pipeline with the split search and
// the JSON report, and the replay backend in both searches. Counts the inputs the analysis accepted.
struct Coverage {
  int analyzed = 0, replayed = 0;
};

// `counters`: the counters file beside the profile, or "" for none.
void through_every_entry_point(const ScratchDir& dir, const std::string& csv_text, const std::string& sidecar,
                               Coverage& coverage, const std::string& counters = "") {
  fs::remove_all(dir.path() / "in");
  fs::create_directories(dir.path() / "in");
  const fs::path csv = dir.write("in/profile.csv", csv_text);
  if (!sidecar.empty()) dir.write("in/profile.json", sidecar);
  if (!counters.empty()) {
    const fs::path path = dir.write("in/profile.counters.csv", counters);
    survives("counters reader", counters, [&] { read_counters_file(path); });
  }
  survives("profile reader", csv_text, [&] { profiler::read_profile_csv(csv); });
  coverage.analyzed += survives("analyze", csv_text, [&] {
    analyze::AnalyzeRequest request;
    request.inputs = {csv.string()};
    request.analysis.check_split = true;
    request.explain_with_counters = !counters.empty();
    request.out_dir = dir.path() / "analysis";
    request.json_path = (dir.path() / "report.json").string();
    std::ostringstream out;
    analyze::run_analyze(request, out);
  });
  for (const profiler::MSearch mode : {profiler::MSearch::adaptive, profiler::MSearch::grid}) {
    coverage.replayed += survives("replay", csv_text, [&] {
      profiler::ReplayRequest request;
      request.recorded = csv;
      request.out_dir = dir.path() / "replay";
      request.search.mode = mode;
      profiler::run_replay(request);
    });
  }
}

// `counters`: a counters file for the profile, mutated beside it every third round ("" for none).
void mutate_seed(const std::string& seed, unsigned random_seed, bool with_sidecar, const std::string& counters = "") {
  ScratchDir dir;
  std::mt19937 random(random_seed);
  Coverage coverage;
  for (int round = 0; round < kRoundsPerSeed; ++round) {
    Table table = table_of(seed);
    const int edits = 1 + int(random() % 3);
    for (int edit = 0; edit < edits; ++edit) mutate(table, random);
    std::string counters_text;
    if (!counters.empty() && round % 3 == 0) {
      Table counters_table = table_of(counters);
      if (random() % 2) mutate(counters_table, random);
      counters_text = serialized(counters_table, random);
    }
    through_every_entry_point(dir, serialized(table, random), with_sidecar ? mutated_sidecar(random) : "", coverage,
                              counters_text);
  }
  ::testing::Test::RecordProperty("analyzed", coverage.analyzed);
  ::testing::Test::RecordProperty("replayed", coverage.replayed);
  // The mutations must leave most inputs readable, or the analysis and the search behind the readers go untested.
  EXPECT_GT(coverage.analyzed, kRoundsPerSeed / 4);
  EXPECT_GT(coverage.replayed, kRoundsPerSeed / 4);
}

TEST(AdversarialInputs, ShapescopeProfileWithEveryOptionalColumn) {
  mutate_seed(shapescope_seed(), 11, true, counters_seed());
}

TEST(AdversarialInputs, GroupedProfile) { mutate_seed(grouped_seed(), 12, true); }

TEST(AdversarialInputs, StudyCsvOfTheDataFolder) {
  mutate_seed(study_seed(testing_data::data_dir() / "h200" / "study_method_twice_fp16_K4096_N14336.csv", 120), 13,
              false);
}

// Each odd kernel name at every M of the profile, so that every cause reads it.
TEST(AdversarialInputs, OddKernelNamesAtEveryM) {
  ScratchDir dir;
  Coverage coverage;
  for (const std::string& name : odd_kernel_names()) {
    Table table = table_of(shapescope_seed());
    const std::size_t at = std::size_t(table.column("kernel_name"));
    for (std::size_t row = 0; row < table.rows.size(); ++row)
      if (row % 5 != 0) table.rows[row][at] = name;
    through_every_entry_point(dir, table.text(), kSidecar, coverage);
    survives("tile parser", name, [&] { analyze::tile_from_kernel_name(name); });
    survives("launched kernel", name, [&] { analyze::launched_kernel(name); });
  }
  EXPECT_EQ(coverage.analyzed, int(odd_kernel_names().size()));
}

// The adaptive search over grids no sweep would give: NaN, infinite and zero answers, one point, equal steps
// and M at the end of int64. It must end, within the grid, each M asked once.
TEST(AdversarialInputs, AdaptiveSearchEndsOnAnyAnswers) {
  std::mt19937 random(21);
  const std::vector<double> odd_values = {std::nan(""), INFINITY, -INFINITY, 0, -1, 1e308, 1e-320};
  const std::vector<std::vector<int64_t>> grids = {
      {1}, {7, 8}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {INT64_MAX - 2, INT64_MAX - 1, INT64_MAX},
      {1, 2, int64_t(1) << 40, int64_t(1) << 62, (int64_t(1) << 62) + 1, INT64_MAX}};
  std::vector<std::vector<int64_t>> all_grids = grids;
  std::vector<int64_t> irregular;
  for (int64_t m = 1; m < 3000; m += 1 + int64_t(random() % 37)) irregular.push_back(m);
  all_grids.push_back(irregular);
  for (const std::vector<int64_t>& grid : all_grids) {
    for (int round = 0; round < 30; ++round) {
      profiler::AdaptiveOptions options;
      options.grid = grid;
      if (round % 3 == 0) options.boundaries = {{grid.back(), INFINITY}, {grid.front(), std::nan("")}, {0, 1}};
      std::vector<int64_t> asked;
      const profiler::AdaptiveResult result = profiler::adaptive_search(options, [&](int64_t m) {
        asked.push_back(m);
        profiler::SearchPoint point;
        point.measured = random() % 5 != 0;
        point.time_us = random() % 3 ? double(m % 97) + 1 : odd_values[pick(random, odd_values)];
        point.utils = random() % 3 ? 1 / point.time_us : odd_values[pick(random, odd_values)];
        point.rel_noise = random() % 4 ? 0 : odd_values[pick(random, odd_values)];
        point.kernel_name = random() % 2 ? "a" : "b";
        return point;
      });
      std::vector<int64_t> unique = asked;
      std::sort(unique.begin(), unique.end());
      EXPECT_EQ(std::unique(unique.begin(), unique.end()), unique.end()) << "an M asked twice";
      for (int64_t m : asked) EXPECT_TRUE(std::binary_search(grid.begin(), grid.end(), m)) << m;
      EXPECT_EQ(result.measured, asked);
    }
  }
}

// Hugging Face configs with one size at a time replaced by an extreme value, a wrong type or nothing.
TEST(AdversarialInputs, HfConfigsWithOneKeyAtAnExtreme) {
  ScratchDir dir;
  int read = 0, rounds = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(SHAPESCOPE_SOURCE_DIR) / "tests/data/hf_configs")) {
    const nlohmann::json original = nlohmann::json::parse(file_text(entry.path()));
    for (const auto& [key, value] : original.items()) {
      if (!value.is_number()) continue;
      for (const nlohmann::json& extreme :
           {nlohmann::json(0), nlohmann::json(-1), nlohmann::json(INT64_MAX), nlohmann::json(1e308),
            nlohmann::json(0.5), nlohmann::json("64"), nlohmann::json(nullptr), nlohmann::json::array()}) {
        nlohmann::json config = original;
        config[key] = extreme;
        const std::string text = config.dump();
        const fs::path path = dir.write("config.json", text);
        ++rounds;
        read += survives("hf config", text, [&] { model_from_hf_config(path, "mutated"); });
      }
    }
  }
  EXPECT_GT(rounds, 100);
  EXPECT_GT(read, 0);
}

// The nastiest files through the CLIs: exit 0, or exit 2 with one line on stderr.
TEST(AdversarialInputs, ClisEndInAResultOrOneLine) {
  if (!testing_support::analyze_binary_built() || !testing_support::profile_binary_built())
    GTEST_SKIP() << "analyze or profile not built";
  ScratchDir dir;
  std::vector<std::pair<std::string, std::string>> files;  // name, content
  {
    Table table = table_of(shapescope_seed());
    const std::size_t name = std::size_t(table.column("kernel_name"));
    const std::vector<std::string> names = odd_kernel_names();
    for (std::size_t row = 0; row < table.rows.size(); ++row) table.rows[row][name] = names[row % names.size()];
    files.push_back({"odd_names.csv", table.text()});
    for (auto& row : table.rows)
      for (const char* column : {"n", "k", "tile_m", "tile_n"})
        row[std::size_t(table.column(column))] = "9223372036854775807";
    files.push_back({"huge_sizes.csv", table.text()});
    for (auto& row : table.rows) row[std::size_t(table.column("utils"))] = "nan";
    files.push_back({"nan_utils.csv", table.text()});
  }
  {
    Table table = table_of(shapescope_seed());
    table.rows.back()[std::size_t(table.column("batch"))] = "9223372036854775807";
    table.rows.back()[std::size_t(table.column("m"))] = "9223372036854775807";
    files.push_back({"int64_max_m.csv", table.text()});
    table.rows.resize(1);
    files.push_back({"one_row.csv", table.text()});
    table.rows.clear();
    files.push_back({"header_only.csv", table.text()});
  }
  files.push_back({"empty.csv", ""});
  files.push_back({"study_nan_m.csv", "batch,kernel_time,flops,utils\nnan,1,1,1\n1,2,2,2\n"});
  files.push_back({"study_huge_m.csv", "batch,kernel_time,flops,utils\n1e300,1,1,1\n9223372036854775807,1,1,1\n"});
  files.push_back({"crlf_dup_columns.csv", "batch,batch,kernel_time,flops,utils\r\n1,1,2,3,0.1\r\n2,2,2,3,0.2\r\n"});
  files.push_back({"not_utf8.csv", "batch,kernel_time,flops,utils,kernel_name\n1,2,3,0.1,\xff\xfe\n2,2,3,0.1,\x80x\n"});
  for (const auto& [name, content] : files) {
    const fs::path csv = dir.write(name, content);
    const fs::path out = dir.path() / ("out_" + name);
    for (const auto& [tool, arguments] :
         {std::pair{testing_support::analyze_binary().string(), csv.string() + " --out " + out.string()},
          std::pair{testing_support::profile_binary(), "--replay " + csv.string() + " --out " + out.string()},
          std::pair{testing_support::profile_binary(),
                    "--replay " + csv.string() + " --m-search adaptive --out " + out.string() + "_adaptive"}}) {
      const testing_support::Outcome run = testing_support::run_tool(tool, arguments);
      const std::string what = fs::path(tool).filename().string() + " on " + name;
      EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 2) << what << ": exit " << run.exit_code << "\n"
                                                              << run.stderr_text.substr(0, 2000);
      if (run.exit_code == 2) {
        EXPECT_EQ(std::count(run.stderr_text.begin(), run.stderr_text.end(), '\n'), 1) << what << ": "
                                                                                        << run.stderr_text;
      }
      EXPECT_EQ(run.stderr_text.find("internal error"), std::string::npos) << what << ": " << run.stderr_text;
    }
  }
}

// An adaptive sweep resumed from its own partial file after the file was edited: rows reordered, repeated, off
// the grid, with NaN MFU or another status. The resume ends in a profile or one line and exit 2.
TEST(AdversarialInputs, AdaptiveResumeFromAnEditedPartialFile) {
  if (!testing_support::profile_binary_built()) GTEST_SKIP() << "profile not built";
  ScratchDir dir;
  std::string grid;
  for (int m = 1; m <= 24; ++m) grid += (m > 1 ? "," : "") + std::to_string(m);
  const std::string sweep = "--backend cpu --shape 64,64 --kernel cpu_bf16 --m-search adaptive --m-list " + grid +
                            " --peak-tflops 1 --min-samples 1 --max-samples 1 --warmup 0 --threads 1 --out ";
  std::mt19937 random(31);
  for (int round = 0; round < 3; ++round) {
    const fs::path out = dir.path() / ("out" + std::to_string(round));
    const testing_support::Outcome partial = testing_support::run_tool(testing_support::profile_binary(),
                                                                       sweep + out.string() + " --max-points 6");
    ASSERT_EQ(partial.exit_code, 0) << partial.stderr_text;
    const fs::path csv = out / "shape_N64_K64_cpu_bf16.csv";
    ASSERT_TRUE(fs::exists(csv));
    Table table = table_of(file_text(csv));
    const std::size_t batch = std::size_t(table.column("batch")), utils = std::size_t(table.column("utils")),
                      status = std::size_t(table.column("status"));
    if (round == 0) {
      std::reverse(table.rows.begin(), table.rows.end());
      table.rows.push_back(table.rows.front());
      table.rows.front()[batch] = "4000";
    } else if (round == 1) {
      for (std::size_t row = 0; row < table.rows.size(); ++row)
        table.rows[row][row % 2 ? utils : status] = row % 2 ? "nan" : "error";
    } else {
      for (int edit = 0; edit < 3; ++edit) mutate(table, random);
    }
    dir.write(fs::relative(csv, dir.path()).string(), table.text());
    const testing_support::Outcome resumed = testing_support::run_tool(testing_support::profile_binary(),
                                                                       sweep + out.string());
    EXPECT_TRUE(resumed.exit_code == 0 || resumed.exit_code == 2) << round << ": exit " << resumed.exit_code << "\n"
                                                                  << resumed.stderr_text.substr(0, 2000);
    if (resumed.exit_code == 2) {
      EXPECT_EQ(std::count(resumed.stderr_text.begin(), resumed.stderr_text.end(), '\n'), 1) << resumed.stderr_text;
    }
  }
}

}  // namespace
}  // namespace shapescope
