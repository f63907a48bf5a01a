#include "analyze/study_outputs.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "analyze/python_float.hpp"
#include "common/atomic_file.hpp"

namespace shapescope::analyze {

namespace {

double measured_time(const Series& series, int64_t m) {
  const auto it = std::lower_bound(series.points.begin(), series.points.end(), m,
                                   [](const SeriesPoint& point, int64_t value) { return point.m < value; });
  return it->time_us;  // plan parts are measured M by construction
}

}  // namespace

std::string low_utils_csv(const SeriesAnalysis& analysis) {
  std::string out = "batch,kernel_time,flops,utils\n";
  for (const Finding& finding : analysis.findings) {
    const SeriesPoint& point = analysis.series->points[finding.anomaly.index];
    out += fmt::format("{},{},{},{}\n", point.m, python_repr(point.time_us), python_repr(point.tflops),
                       python_repr(point.utils));
  }
  return out;
}

std::string split_gemm_csv(const SeriesAnalysis& analysis) {
  std::string out = "batch,kernel_time,row1_batch,row1_time,row2_batch,row2_time\n";
  for (const Finding& finding : analysis.findings) {
    if (!finding.plans.study_pair) continue;
    const std::vector<int64_t>& parts = finding.plans.study_pair->parts;
    out += fmt::format("{},{}", finding.anomaly.m, python_repr(finding.anomaly.time_us));
    for (const int64_t part : parts) {
      out += fmt::format(",{},{}", part, python_repr(measured_time(*analysis.series, part)));
    }
    out += "\n";
  }
  return out;
}

std::vector<std::filesystem::path> write_study_outputs(const SeriesAnalysis& analysis,
                                                       const std::filesystem::path& out_dir, bool with_split) {
  ensure_writable_directory(out_dir, "--out-dir");
  std::vector<std::filesystem::path> written;
  written.push_back(out_dir / ("low_utils_" + analysis.series->name + ".csv"));
  write_file_atomically(written.back(), low_utils_csv(analysis));
  if (with_split) {
    written.push_back(out_dir / ("split_gemm_" + analysis.series->name + ".csv"));
    write_file_atomically(written.back(), split_gemm_csv(analysis));
  }
  return written;
}

}  // namespace shapescope::analyze
