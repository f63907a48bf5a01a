// shapescope's own profiles (common/profile_schema.hpp), with the JSON sidecar
// the profiler writes beside each CSV (same stem, .json) when it is there.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "analyze/readers.hpp"
#include "common/device_peaks.hpp"
#include "common/profile_schema.hpp"
#include "common/m_search_grid.hpp"
#include "common/sidecar_schema.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

// What the sidecar says of the series (common/sidecar_schema.hpp); what it does not say stays unknown.
void describe_from_sidecar(Series& series, const Sidecar& sidecar) {
  series.model = sidecar.problem.model;
  series.module = sidecar.problem.module;
  if (series.device.empty()) series.device = sidecar.device.name;
  series.multiprocessors = int(sidecar.device.multiprocessors);
  series.tp = int(sidecar.problem.tp);
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
  if (row.tile_m > 0 && row.tile_n > 0) point.tile = TileShape{row.tile_m, row.tile_n};
  if (row.split_k > 0) point.split_k = row.split_k;
  point.stddev_us = row.time_us_stddev;
  point.gbytes_per_s = row.gbytes_per_s;
  point.ci95_us = row.ci95_us;
  point.fastest_us = row.time_us_min;
  point.slowest_us = row.time_us_max;
  point.passes = row.passes;
  if (row.passes > 1) point.fastest_pass_us = row.time_us_min;
  point.status = row.status;
  point.throttled = row.status == kStatusThrottled;
  point.sm_clock_mhz = row.sm_clock_end_mhz > 0 ? std::min(row.sm_clock_mhz, row.sm_clock_end_mhz) : row.sm_clock_mhz;
  point.sampled_sm_clock_mhz = row.sm_clock_sampled_mean_mhz;
  if (row.power_capped_pct) point.power_capped_share = *row.power_capped_pct / 100;
  point.power_limit_w = row.power_limit_w.value_or(0);
  point.line = line;
  if (row.grouped) {
    point.executed_utils = row.grouped->executed_utils;
    point.useful_rows = row.grouped->useful_rows;
    point.padded_rows = row.grouped->padded_rows;
    point.executed_rows = row.grouped->executed_rows;
    point.busiest_expert_rows = row.grouped->rows_max;
    point.sol_fraction = row.grouped->sol_fraction;
  }
  return point;
}

}  // namespace

std::vector<Series> read_shapescope_csv(const csv::Table& table, const std::string& path, const ReadOptions& options) {
  const std::string stem = std::filesystem::path(path).stem().string();
  std::optional<Sidecar> sidecar;
  if (const std::optional<nlohmann::json> content = read_sidecar(path)) sidecar = parse_sidecar(*content);
  const std::vector<int64_t> m_grid = sidecar ? adaptive_grid(sidecar->m_search) : std::vector<int64_t>{};
  // One profile file is one (kernel, shape); a concatenated file still splits cleanly.
  using Key = std::tuple<std::string, std::string, std::string, int64_t, int64_t, int64_t, std::string, std::string,
                         std::string, std::string>;
  std::map<Key, std::size_t> index_of;
  std::vector<Series> all;
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    const std::string where = fmt::format("{}:{}", path, table.row_lines[row]);
    const ProfileRow parsed = parse_profile_row(table.header, table.rows[row], where);
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
      series.m_grid = m_grid;
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
