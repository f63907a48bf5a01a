// AMD AITER's tuned GEMM tables:
// gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio.
// One file holds many series, one per (gfx, cu_num, N, K), in first-seen order.
#include <filesystem>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "analyze/csv_fields.hpp"
#include "analyze/readers.hpp"
#include "common/device_peaks.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

// The table lists a device's full-chip peak; a part with fewer CUs enabled
// (cu_num, e.g. 80 on an MI308X-class gfx942) peaks proportionally lower.
double aiter_peak_tflops(const std::string& gfx, int cu_num, const ReadOptions& options, const std::string& where) {
  if (options.peak_tflops_override > 0) return options.peak_tflops_override;
  const auto device = find_device_peak(gfx);
  if (!device || device->fp8_tflops <= 0) {
    throw UserError(fmt::format("{}: no FP8 peak known for '{}'; pass --peak-tflops <TFLOP/s>", where, gfx));
  }
  if (device->multiprocessors > 0 && cu_num > 0) return device->fp8_tflops * cu_num / device->multiprocessors;
  return device->fp8_tflops;
}

}  // namespace

std::vector<Series> read_aiter_csv(const csv::Table& table, const std::string& path, const ReadOptions& options) {
  const std::string stem = std::filesystem::path(path).stem().string();
  using Key = std::tuple<std::string, int64_t, int64_t, int64_t>;  // gfx, cu_num, N, K
  std::map<Key, std::size_t> index_of;
  std::vector<Series> all;
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    const CsvRecord record(table, row, path);
    const Key key{record.text("gfx"), record.integer("cu_num"), record.integer("N"), record.integer("K")};
    auto [found, inserted] = index_of.emplace(key, all.size());
    if (inserted) {
      const auto& [gfx, cu_num, n, k] = key;
      Series series;
      series.name = fmt::format("{}_{}_cu{}_N{}_K{}", stem, gfx, cu_num, n, k);
      series.source = path;
      series.format = "aiter";
      series.device = gfx;
      series.multiprocessors = static_cast<int>(cu_num);
      series.kernel = stem;
      series.dtype = "fp8";
      series.n = n;
      series.k = k;
      series.peak_tflops = aiter_peak_tflops(gfx, static_cast<int>(cu_num), options, record.where());
      all.push_back(std::move(series));
    }
    Series& series = all[found->second];
    SeriesPoint point;
    point.line = table.row_lines[row];
    point.m = record.integer("M");
    point.time_us = record.positive_time("us");
    point.tflops = record.number("tflops");
    point.utils = point.tflops / series.peak_tflops;
    point.kernel_name = record.text("kernelName");
    series.points.push_back(std::move(point));
  }
  return all;
}

}  // namespace shapescope::analyze
