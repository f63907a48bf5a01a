#include "profiler/summary_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace shapescope::profiler {

std::string file_table(const std::vector<FileSummary>& files) {
  size_t name_width = 4;
  for (const FileSummary& file : files) name_width = std::max(name_width, file.csv.filename().string().size());
  std::string text = fmt::format("{:<{}}  {:>6}  {:>6}  {:>6}  {:>17}  {:>17}\n", "file", name_width, "points", "ok",
                                 "failed", "best MFU (M)", "worst MFU (M)");
  for (const FileSummary& file : files) {
    const std::string best = file.ok ? fmt::format("{:.1f}% ({})", 100 * file.best_utils, file.best_m) : "-";
    const std::string worst = file.ok ? fmt::format("{:.1f}% ({})", 100 * file.worst_utils, file.worst_m) : "-";
    text += fmt::format("{:<{}}  {:>6}  {:>6}  {:>6}  {:>17}  {:>17}\n", file.csv.filename().string(), name_width,
                        file.points, file.ok, file.failed, best, worst);
  }
  return text;
}

std::string summary_table(const SweepResult& result) {
  std::string text = file_table(result.files);
  const SweepTiming& t = result.timing;
  text += fmt::format("sweep wall {:.1f} s (+{:.1f} s setup), timed kernel time {:.1f} s, overhead {:.0f}%\n",
                      t.wall_s, t.setup_s, t.timed_s, 100 * t.overhead());
  text += result.phases.table();
  if (!result.files.empty()) text += fmt::format("profiles in {}\n", result.files.front().csv.parent_path().string());
  return text;
}

}  // namespace shapescope::profiler
