// `profile --counters` against Nsight Compute on the same points: for each M, our counters
// file's row beside ncu's values for the same metrics (ncu --csv --print-units base output
// of one profile run at that M), and whether they agree within the tolerance.
//   counters_crosscheck FILE.counters.csv M=ncu_M.csv [M=ncu_M.csv ...] [--tolerance 0.1]
//   counters_crosscheck --ncu-metrics      # the collector's metric names, as ncu --metrics takes them
// ncu sees every launch of the run (the L2 flush, the timing floors' empty kernels, operand
// fills, the reference check, the timed sample): only the kernels our row names are kept; a
// kernel's value is the median over its launches, and a run's value sums (ratios:
// duration-weighted) over them, as the collector does over the kernels of one run. A memset
// in our row has no ncu counterpart (ncu profiles kernels only).
#include <cxxabi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "common/csv.hpp"
#include "common/kernel_counters.hpp"

namespace {

using namespace shapescope;

double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t half = values.size() / 2;
  return values.size() % 2 ? values[half] : (values[half - 1] + values[half]) / 2;
}

// kernel -> metric -> values over its launches.
using NcuValues = std::map<std::string, std::map<std::string, std::vector<double>>>;

NcuValues read_ncu_csv(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (!in_table && line.rfind("\"ID\"", 0) != 0) continue;  // ncu's own lines and the program's output
    in_table = true;
    if (line.rfind("\"", 0) != 0) continue;
    text << line << "\n";
  }
  NcuValues values;
  if (!in_table) return values;
  const csv::Table table = csv::parse(text.str(), path);
  const int kernel = table.column("Kernel Name"), metric = table.column("Metric Name"),
            value = table.column("Metric Value");
  if (kernel < 0 || metric < 0 || value < 0) return values;
  for (const auto& row : table.rows) {
    std::string number = row[std::size_t(value)];
    number.erase(std::remove(number.begin(), number.end(), ','), number.end());
    double parsed = 0;
    try {
      parsed = std::stod(number);
    } catch (const std::exception&) {  // "n/a" and the like: not collected (and no empty entry left behind)
      continue;
    }
    values[row[std::size_t(kernel)]][row[std::size_t(metric)]].push_back(parsed);
  }
  return values;
}

// The base name of a kernel (before its template arguments or parameters): CUPTI may give the
// mangled name, ncu the demangled one.
std::string base_name(const std::string& kernel) {
  std::string readable = kernel;
  if (kernel.rfind("_Z", 0) == 0) {
    int status = 0;
    char* demangled = abi::__cxa_demangle(kernel.c_str(), nullptr, nullptr, &status);
    if (status == 0 && demangled) readable = demangled;
    std::free(demangled);
  }
  std::string name = readable.substr(0, readable.find_first_of("<("));
  const std::size_t space = name.rfind(' ');
  if (space != std::string::npos) name = name.substr(space + 1);
  const std::size_t scope = name.rfind("::");
  return scope == std::string::npos ? name : name.substr(scope + 2);
}

// ncu's kernels that our row ran.
NcuValues kernels_of_ours(const NcuValues& ncu, const std::vector<std::string>& ours) {
  std::vector<std::string> names;
  for (const std::string& kernel : ours) names.push_back(base_name(kernel));
  NcuValues kept;
  for (const auto& [kernel, metrics] : ncu) {
    const std::string name = base_name(kernel);
    if (std::find(names.begin(), names.end(), name) != names.end()) kept[kernel] = metrics;
  }
  return kept;
}

// One run's value of `metric` from ncu's kernels, as the collector aggregates it.
double run_value(const NcuValues& values, const CounterMetric& metric) {
  const char* duration = counter_metrics().front().name;
  double total = 0, weight = 0;
  bool any = false;
  for (const auto& [kernel, metrics] : values) {
    const auto found = metrics.find(metric.name);
    if (found == metrics.end()) continue;
    const double value = median(found->second);
    const auto time = metrics.find(duration);
    const double w = time == metrics.end() ? 1 : median(time->second);
    total += metric.is_ratio ? value * w : value;
    weight += w;
    any = true;
  }
  if (!any) return std::nan("");
  return metric.is_ratio ? total / weight : total;
}

}  // namespace

int main(int argc, char** argv) {
  std::string counters_file;
  std::vector<std::string> ncu_files;
  double tolerance = 0.10;
  bool list_metrics = false;
  CLI::App app{"profile --counters against Nsight Compute on the same points"};
  app.add_option("counters", counters_file, "<profile>.counters.csv");
  app.add_option("ncu", ncu_files, "M=ncu.csv: ncu --csv --print-units base output of a run at M");
  app.add_option("--tolerance", tolerance, "relative difference counted as agreement")->capture_default_str();
  app.add_flag("--ncu-metrics", list_metrics, "print the collected metrics comma-separated (for ncu --metrics)");
  CLI11_PARSE(app, argc, argv);
  if (list_metrics) {
    std::string names;
    for (const CounterMetric& metric : counter_metrics()) names += (names.empty() ? "" : ",") + std::string(metric.name);
    fmt::print("{}\n", names);
    return 0;
  }
  if (counters_file.empty() || ncu_files.empty()) {
    std::fprintf(stderr, "counters_crosscheck: give a counters file and at least one M=ncu.csv (or --ncu-metrics)\n");
    return 2;
  }
  try {
    const auto ours = read_counters_file(counters_file);
    int compared = 0, agreed = 0;
    for (const std::string& spec : ncu_files) {
      const std::size_t eq = spec.find('=');
      const int64_t m = std::stoll(spec.substr(0, eq));
      const NcuValues everything = read_ncu_csv(spec.substr(eq + 1));
      const auto row = ours.find(m);
      const NcuValues ncu = row == ours.end() ? everything : kernels_of_ours(everything, row->second.kernels);
      if (row == ours.end() || ncu.empty()) {
        fmt::print("M={}: {}\n", m,
                   row == ours.end() ? "no counters row" : "no ncu values for the kernels ours ran");
        continue;
      }
      fmt::print("M={} ({} kernel(s) in ncu, {} in ours)\n", m, ncu.size(), row->second.kernels.size());
      for (const CounterMetric& metric : counter_metrics()) {
        double mine = row->second.*metric.field, theirs = run_value(ncu, metric);
        if (metric.field == &KernelCounters::duration_us) theirs /= 1000;  // ns -> us, as ours
        if (!std::isfinite(mine) || !std::isfinite(theirs)) {
          fmt::print("  {:<72} ours {:>14.4g} ncu {:>14.4g}  (not compared)\n", metric.name, mine, theirs);
          continue;
        }
        const double relative = theirs != 0 ? std::abs(mine - theirs) / std::abs(theirs) : std::abs(mine);
        ++compared;
        agreed += relative <= tolerance;
        fmt::print("  {:<72} ours {:>14.4g} ncu {:>14.4g}  {:+6.1f}% {}\n", metric.name, mine, theirs,
                   100 * (theirs != 0 ? mine / theirs - 1 : 0), relative <= tolerance ? "ok" : "DIFFERS");
      }
    }
    fmt::print("cross-check: {} of {} metric values within {:.0f}% of Nsight Compute\n", agreed, compared,
               100 * tolerance);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "counters_crosscheck: %s\n", error.what());
    return 2;
  }
}
