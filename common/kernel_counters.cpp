#include "common/kernel_counters.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/csv.hpp"
#include "common/user_error.hpp"

namespace shapescope {

namespace {

constexpr const char* kListSeparator = "; ";

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : kListSeparator) + item;
  return text;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find(kListSeparator, begin), text.size());
    items.push_back(text.substr(begin, end - begin));
    begin = end + std::char_traits<char>::length(kListSeparator);
  }
  return items;
}

std::vector<std::string> header() {
  std::vector<std::string> columns = {"m"};
  for (const CounterMetric& metric : counter_metrics()) columns.push_back(metric.column);
  for (const char* column : {"min_bytes", "kernels", "missing"}) columns.push_back(column);
  return columns;
}

std::string format_value(double value) { return std::isfinite(value) ? fmt::format("{}", value) : ""; }

double parse_value(const std::string& text, const std::filesystem::path& path, std::size_t line, const char* column) {
  if (text.empty()) return std::numeric_limits<double>::quiet_NaN();
  double value = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
  if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size())
    throw UserError(fmt::format("{}:{}: {} '{}' is not a number; rerun profile --counters to rewrite the file",
                                path.string(), line, column, text));
  return value;
}

}  // namespace

const std::vector<CounterMetric>& counter_metrics() {
  static const std::vector<CounterMetric> metrics = {
      {"gpu__time_duration.sum", "duration_us", &KernelCounters::duration_us, false},
      {"dram__bytes_read.sum", "dram_read_bytes", &KernelCounters::dram_read_bytes, false},
      {"dram__bytes_write.sum", "dram_write_bytes", &KernelCounters::dram_write_bytes, false},
      {"lts__t_sector_hit_rate.pct", "l2_hit_rate_pct", &KernelCounters::l2_hit_rate_pct, true},
      {"sm__warps_active.avg.pct_of_peak_sustained_active", "achieved_occupancy_pct",
       &KernelCounters::achieved_occupancy_pct, true},
      {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "sm_active_pct", &KernelCounters::sm_active_pct, true},
      // Every chip from Ampere on has this name (Hopper has no sm__pipe_tensor_op_gmma_cycles_active).
      {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "tensor_pipe_pct",
       &KernelCounters::tensor_pipe_pct, true},
      {"smsp__inst_executed.sum", "instructions", &KernelCounters::instructions, false},
  };
  return metrics;
}

std::filesystem::path counters_path(const std::filesystem::path& csv_path) {
  std::filesystem::path path = csv_path;
  path.replace_extension(".counters.csv");
  return path;
}

std::map<int64_t, KernelCounters> read_counters_file(const std::filesystem::path& path) {
  const csv::Table table = csv::read_file(path);
  const std::vector<std::string> expected = header();
  if (table.header != expected)
    throw UserError(fmt::format("{}: not a counters file (columns {}); rerun profile --counters to rewrite it",
                                path.string(), join(expected)));
  std::map<int64_t, KernelCounters> rows;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::vector<std::string>& fields = table.rows[r];
    const std::size_t line = table.row_lines[r];
    KernelCounters counters;
    // An integer, read as one: a NaN or a value past int64's end cast from a double is undefined.
    const std::string& m = fields[0];
    const auto parsed = std::from_chars(m.data(), m.data() + m.size(), counters.m);
    if (parsed.ec != std::errc() || parsed.ptr != m.data() + m.size() || counters.m <= 0)
      throw UserError(fmt::format("{}:{}: m '{}' is not a positive integer; rerun profile --counters to rewrite the "
                                  "file",
                                  path.string(), line, m));
    std::size_t column = 1;
    for (const CounterMetric& metric : counter_metrics())
      counters.*metric.field = parse_value(fields[column++], path, line, metric.column);
    counters.min_bytes = parse_value(fields[column++], path, line, "min_bytes");
    counters.kernels = split(fields[column++]);
    counters.missing = split(fields[column++]);
    rows[counters.m] = std::move(counters);
  }
  return rows;
}

void write_counters_file(const std::filesystem::path& path, const std::vector<KernelCounters>& rows) {
  std::map<int64_t, KernelCounters> merged;
  if (std::filesystem::exists(path)) merged = read_counters_file(path);
  for (const KernelCounters& row : rows) merged[row.m] = row;
  std::string text = csv::format_row(header());
  for (const auto& [m, counters] : merged) {
    std::vector<std::string> fields = {std::to_string(m)};
    for (const CounterMetric& metric : counter_metrics()) fields.push_back(format_value(counters.*metric.field));
    fields.push_back(format_value(counters.min_bytes));
    fields.push_back(join(counters.kernels));
    fields.push_back(join(counters.missing));
    text += csv::format_row(fields);
  }
  write_file_atomically(path, text);
}

}  // namespace shapescope
