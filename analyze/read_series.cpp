#include <cstdio>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "analyze/csv_fields.hpp"
#include "analyze/readers.hpp"
#include "analyze/series_finalize.hpp"
#include "common/shard_manifest.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

const std::vector<SeriesFormat>& series_formats() {
  // shapescope first: its columns are a superset of the study's.
  static const std::vector<SeriesFormat> formats = {
      {"shapescope", {"batch", "kernel_time", "flops", "utils", "status"}, read_shapescope_csv},
      {"aiter", {"gfx", "cu_num", "M", "N", "K", "us", "tflops"}, read_aiter_csv},
      {"study", {"batch", "kernel_time", "flops", "utils"}, read_study_csv},
  };
  return formats;
}

namespace {

// A folder of shards (profile --shard/--gpus/--workers) read as one profile: per file, the rows of every
// shard's CSV together; the points no shard has measured yet are named on stderr.
std::vector<Series> read_sharded_folder(const std::string& folder, const ReadOptions& options) {
  const ShardedProfile sharded = read_sharded_profile(folder);
  static std::set<std::string> reported;  // analysis and triage each read the inputs: say it once
  if (reported.insert(folder).second) fmt::print(stderr, "analyze: {}: {}\n", folder, sharded.missing_summary());
  std::vector<Series> all;
  for (const auto& [file, csvs] : sharded.csvs) {
    csv::Table table = csv::read_file(csvs.front());
    for (std::size_t i = 1; i < csvs.size(); ++i) {
      const csv::Table more = csv::read_file(csvs[i]);
      if (more.header != table.header) {
        throw UserError(fmt::format("{}: its columns differ from {}'s; re-run one of the two shards", csvs[i].string(),
                                    csvs.front().string()));
      }
      table.rows.insert(table.rows.end(), more.rows.begin(), more.rows.end());
      table.row_lines.insert(table.row_lines.end(), more.row_lines.begin(), more.row_lines.end());
    }
    if (table.rows.empty()) continue;
    std::vector<Series> series = read_shapescope_csv(table, csvs.front().string(), options);
    for (Series& one : series) {
      finalize_series(one, options.dedup);
      all.push_back(std::move(one));
    }
  }
  if (all.empty()) throw UserError(fmt::format("{}: its shards hold no measured rows yet; nothing to analyze", folder));
  return all;
}

}  // namespace

std::vector<Series> read_series_file(const std::string& path, const ReadOptions& options) {
  if (std::filesystem::is_directory(path) && is_sharded_folder(path)) return read_sharded_folder(path, options);
  const csv::Table table = csv::read_file(path);
  std::string tried;
  for (const SeriesFormat& format : series_formats()) {
    const std::string missing = missing_columns(table, format.required_columns);
    if (missing.empty()) {
      if (table.rows.empty()) {
        throw UserError(fmt::format("{}: a {} header but no rows; nothing to analyze", path, format.name));
      }
      std::vector<Series> series = format.read(table, path, options);
      for (Series& one : series) finalize_series(one, options.dedup);
      return series;
    }
    tried += fmt::format("{}{} (missing {})", tried.empty() ? "" : "; ", format.name, missing);
  }
  throw UserError(fmt::format("{}:1: columns not recognized; formats tried: {}", path, tried));
}

}  // namespace shapescope::analyze
