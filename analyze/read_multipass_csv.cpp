#include "analyze/read_multipass_csv.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>

#include <fmt/format.h>

#include "analyze/csv_fields.hpp"
#include "analyze/readers.hpp"
#include "analyze/series_finalize.hpp"
#include "common/csv.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

constexpr const char* kPassColumn = "pass";

// The rows of one pass, as a table of their own, keeping each row's source line.
std::vector<std::pair<std::string, csv::Table>> split_by_pass(const csv::Table& table) {
  const int pass_column = table.column(kPassColumn);
  std::vector<std::pair<std::string, csv::Table>> passes;
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    const std::string& pass = table.rows[row][static_cast<std::size_t>(pass_column)];
    auto found = std::find_if(passes.begin(), passes.end(), [&](const auto& entry) { return entry.first == pass; });
    if (found == passes.end()) {
      csv::Table part;
      part.header = table.header;
      passes.emplace_back(pass, std::move(part));
      found = std::prev(passes.end());
    }
    found->second.rows.push_back(table.rows[row]);
    found->second.row_lines.push_back(table.row_lines[row]);
  }
  return passes;
}

}  // namespace

std::vector<Series> read_multipass_csv(const std::string& path, const ReadOptions& options) {
  const csv::Table table = csv::read_file(path);
  if (table.column(kPassColumn) < 0) {
    throw UserError(fmt::format("{}:1: no '{}' column; a multi-pass profile needs one to tell its passes apart",
                                path, kPassColumn));
  }
  if (table.rows.empty()) throw UserError(fmt::format("{}: a header but no rows; nothing to analyze", path));

  std::string tried;
  for (const SeriesFormat& format : series_formats()) {
    const std::string missing = missing_columns(table, format.required_columns);
    if (!missing.empty()) {
      tried += fmt::format("{}{} (missing {})", tried.empty() ? "" : "; ", format.name, missing);
      continue;
    }
    std::vector<Series> all;
    for (auto& [pass, part] : split_by_pass(table)) {
      for (Series& series : format.read(part, path, options)) {
        series.name += " pass " + pass;
        finalize_series(series, options.dedup);
        all.push_back(std::move(series));
      }
    }
    return all;
  }
  throw UserError(fmt::format("{}:1: columns besides '{}' not recognized; formats tried: {}", path, kPassColumn, tried));
}

std::vector<Series> read_series_or_passes(const std::string& path, const ReadOptions& options) {
  std::error_code error;  // anything but a readable file: read_series_file says what is wrong with it
  if (std::filesystem::is_regular_file(path, error) && csv::read_file(path).column(kPassColumn) >= 0) {
    return read_multipass_csv(path, options);
  }
  return read_series_file(path, options);
}

}  // namespace shapescope::analyze
