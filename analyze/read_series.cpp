#include <fmt/format.h>

#include "analyze/csv_fields.hpp"
#include "analyze/readers.hpp"
#include "analyze/series_finalize.hpp"
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

std::vector<Series> read_series_file(const std::string& path, const ReadOptions& options) {
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
