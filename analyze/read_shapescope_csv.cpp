// shapescope's own profiles (common/profile_schema.hpp), with the JSON sidecar
// the profiler writes beside each CSV (same stem, .json) when it is there.
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analyze/readers.hpp"
#include "common/device_peaks.hpp"
#include "common/profile_schema.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

using nlohmann::json;

std::optional<json> read_sidecar(const std::string& csv_path) {
  const std::filesystem::path sidecar = std::filesystem::path(csv_path).replace_extension(".json");
  std::ifstream in(sidecar);
  if (!in) return std::nullopt;
  json parsed = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    throw UserError(fmt::format("{}: not valid JSON; fix or delete the sidecar", sidecar.string()));
  }
  return parsed;
}

// node[section][key] when both levels exist, else nullptr.
const json* member(const json& node, const char* section, const char* key) {
  if (!node.is_object() || !node.contains(section) || !node[section].is_object()) return nullptr;
  const json& inner = node[section];
  return inner.contains(key) ? &inner[key] : nullptr;
}

// The profiler's layout (profiler/sidecar.cpp): device.{name, multiprocessors},
// problem.{model, module, tp, grouped}. Absent or mistyped keys leave the fields unknown.
void describe_from_sidecar(Series& series, const json& sidecar) {
  const auto text = [&](const char* section, const char* key) {
    const json* value = member(sidecar, section, key);
    return value && value->is_string() ? value->get<std::string>() : std::string();
  };
  series.model = text("problem", "model");
  series.module = text("problem", "module");
  if (series.device.empty()) series.device = text("device", "name");
  if (const json* sms = member(sidecar, "device", "multiprocessors"); sms && sms->is_number_integer()) {
    series.multiprocessors = sms->get<int>();
  }
  if (const json* tp = member(sidecar, "problem", "tp"); tp && tp->is_number_integer()) series.tp = tp->get<int>();
}

// "contiguous:128" stays; masked slots keep their size only when it is the same at every M,
// which a per-M "masked:<max_m>" cannot say row by row: the family is "masked".
std::string layout_family(const std::string& layout) {
  return layout.rfind("masked", 0) == 0 ? "masked" : layout;
}

SeriesPoint to_point(const ProfileRow& row, std::size_t line) {
  SeriesPoint point;
  point.m = row.m;
  point.time_us = row.kernel_time_us;
  point.tflops = row.tflops;
  point.utils = row.utils;
  point.kernel_name = row.kernel_name;
  point.stddev_us = row.time_us_stddev;
  point.ci95_us = row.ci95_us;
  point.passes = row.passes;
  if (row.passes > 1) point.fastest_pass_us = row.time_us_min;
  point.status = row.status;
  point.throttled = row.status == kStatusThrottled;
  point.line = line;
  if (row.grouped) {
    point.executed_utils = row.grouped->executed_utils;
    point.useful_rows = row.grouped->useful_rows;
    point.padded_rows = row.grouped->padded_rows;
    point.sol_fraction = row.grouped->sol_fraction;
  }
  return point;
}

}  // namespace

std::vector<Series> read_shapescope_csv(const csv::Table& table, const std::string& path, const ReadOptions& options) {
  const std::string stem = std::filesystem::path(path).stem().string();
  const std::optional<json> sidecar = read_sidecar(path);
  // One profile file is one (kernel, shape); a concatenated file still splits cleanly.
  using Key = std::tuple<std::string, std::string, std::string, int64_t, int64_t, int64_t, std::string, std::string,
                         std::string, std::string>;
  std::map<Key, std::size_t> index_of;
  std::vector<Series> all;
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    const std::string where = fmt::format("{}:{}", path, table.row_lines[row]);
    const ProfileRow parsed = parse_profile_row(table.header, table.rows[row], where);
    if (parsed.status == kStatusThrottled && !(parsed.kernel_time_us > 0)) {
      throw UserError(fmt::format("{}: kernel_time is {} on a measured (throttled) row; it must be positive", where,
                                  parsed.kernel_time_us));
    }
    // Grouped rows: one series per routing and layout family (masked slots may grow with M).
    const std::string routing = parsed.grouped ? parsed.grouped->routing : "";
    const std::string layout = parsed.grouped ? layout_family(parsed.grouped->layout) : "";
    const Key key{parsed.kernel,      parsed.device, parsed.dtype, parsed.n, parsed.k, parsed.batch_count,
                  parsed.timing, routing, layout, parsed.format};
    auto [found, inserted] = index_of.emplace(key, all.size());
    if (inserted) {
      Series series;
      series.source = path;
      series.format = "shapescope";
      series.kernel = parsed.kernel;
      series.device = parsed.device;
      series.dtype = parsed.dtype;
      series.block_format = parsed.format;
      series.n = parsed.n;
      series.k = parsed.k;
      series.batch_count = parsed.batch_count;
      series.peak_tflops = parsed.peak_tflops;
      series.timing = parsed.timing;
      if (parsed.grouped) {
        series.grouped = GroupedSeriesInfo{routing, layout, parsed.grouped->ep, parsed.grouped->groups};
      }
      if (sidecar) describe_from_sidecar(series, *sidecar);
      if (series.multiprocessors == 0) {
        if (const auto peak = find_device_peak(series.device)) series.multiprocessors = peak->multiprocessors;
      }
      all.push_back(std::move(series));
    }
    all[found->second].points.push_back(to_point(parsed, table.row_lines[row]));
  }
  for (Series& series : all) {
    series.name = all.size() == 1 ? stem
                                  : fmt::format("{}_{}_N{}_K{}_{}", stem, series.kernel, series.n, series.k, series.timing);
    if (options.peak_tflops_override > 0) {
      series.peak_tflops = options.peak_tflops_override;
      for (SeriesPoint& point : series.points) point.utils = point.tflops / series.peak_tflops;
    }
  }
  return all;
}

}  // namespace shapescope::analyze
