#include "common/profile_schema.hpp"

#include <charconv>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

const std::vector<std::string>& profile_columns() {
  static const std::vector<std::string> columns = {
      "batch",          "kernel_time",    "flops",         "utils",          "kernel_name",   "m",
      "n",              "k",              "batch_count",   "dtype",          "kernel",        "backend",
      "device",         "peak_tflops",    "time_us_min",   "time_us_max",    "time_us_stddev", "samples",
      "gbytes_per_s",   "rel_err",        "status",        "ci95_us",        "passes",        "sm_clock_mhz",
      "sm_clock_end_mhz", "temperature_c", "power_w",       "timing",        "operand_sets",  "launched",
      "note"};
  return columns;
}

namespace {

// fmt's "{}" is the shortest text that reads back to the same double, so a
// written row re-parses to exactly the measured values.
std::string number(double value) { return fmt::format("{}", value); }
std::string number(int64_t value) { return fmt::format("{}", value); }

}  // namespace

std::vector<std::string> to_fields(const ProfileRow& row) {
  return {number(row.batch),          number(row.kernel_time_us), number(row.tflops),
          number(row.utils),          row.kernel_name,            number(row.m),
          number(row.n),              number(row.k),              number(row.batch_count),
          row.dtype,                  row.kernel,                 row.backend,
          row.device,                 number(row.peak_tflops),    number(row.time_us_min),
          number(row.time_us_max),    number(row.time_us_stddev), number(row.samples),
          number(row.gbytes_per_s),   number(row.rel_err),        row.status,
          number(row.ci95_us),        number(row.passes),         number(row.sm_clock_mhz),
          number(row.sm_clock_end_mhz), number(row.temperature_c), number(row.power_w),
          row.timing,                 number(row.operand_sets),   row.launched,
          row.note};
}

const std::vector<std::string>& grouped_profile_columns() {
  static const std::vector<std::string> columns = {
      "groups",        "active_groups", "rows_min",        "rows_mean",      "rows_max", "useful_rows",
      "padded_rows",   "executed_rows", "executed_tflops", "executed_utils", "sol_us",   "sol_fraction",
      "routing",       "layout",        "ep"};
  return columns;
}

std::vector<std::string> to_grouped_fields(const ProfileRow::Grouped& g) {
  return {number(g.groups),          number(g.active_groups),  number(g.rows_min),      number(g.rows_mean),
          number(g.rows_max),        number(g.useful_rows),    number(g.padded_rows),   number(g.executed_rows),
          number(g.executed_tflops), number(g.executed_utils), number(g.sol_us),        number(g.sol_fraction),
          g.routing,                 g.layout,                 number(g.ep)};
}

namespace {

// Looks fields up by column name; every parse error names the row and the column.
class RowReader {
 public:
  RowReader(const std::vector<std::string>& header, const std::vector<std::string>& fields, const std::string& where)
      : header_(header), fields_(fields), where_(where) {
    if (fields_.size() != header_.size()) {
      throw UserError(fmt::format("{}: {} fields but the header has {}; fix the row", where_, fields_.size(),
                                  header_.size()));
    }
  }

  const std::string* field(std::string_view column) const {
    for (std::size_t i = 0; i < header_.size(); ++i) {
      if (header_[i] == column) return &fields_[i];
    }
    return nullptr;
  }

  const std::string& required(std::string_view column) const {
    const std::string* value = field(column);
    if (value == nullptr) {
      throw UserError(fmt::format("{}: missing column '{}'; a profile needs batch,kernel_time,flops,utils", where_,
                                  column));
    }
    return *value;
  }

  template <typename Number>
  Number parse(std::string_view column, const std::string& text) const {
    Number value{};
    const char* end = text.data() + text.size();
    const auto [stop, error] = std::from_chars(text.data(), end, value);
    if (error != std::errc() || stop != end || text.empty()) {
      throw UserError(fmt::format("{}: column '{}' holds '{}', not a number; fix or remove the row", where_, column,
                                  text));
    }
    return value;
  }

  template <typename Number>
  Number required_number(std::string_view column) const {
    return parse<Number>(column, required(column));
  }

  // Absent or empty optional columns keep the default.
  template <typename Number>
  void optional_number(std::string_view column, Number& target) const {
    const std::string* value = field(column);
    if (value != nullptr && !value->empty()) target = parse<Number>(column, *value);
  }

  void optional_text(std::string_view column, std::string& target) const {
    const std::string* value = field(column);
    if (value != nullptr) target = *value;
  }

 private:
  const std::vector<std::string>& header_;
  const std::vector<std::string>& fields_;
  const std::string& where_;
};

}  // namespace

ProfileRow parse_profile_row(const std::vector<std::string>& header, const std::vector<std::string>& fields,
                             const std::string& where) {
  const RowReader reader(header, fields, where);
  ProfileRow row;
  row.batch = reader.required_number<int64_t>("batch");
  row.kernel_time_us = reader.required_number<double>("kernel_time");
  row.tflops = reader.required_number<double>("flops");
  row.utils = reader.required_number<double>("utils");
  // The study's own Marlin profile has no kernel_name column, so it is read when present.
  reader.optional_text("kernel_name", row.kernel_name);

  row.m = row.batch;
  reader.optional_number("m", row.m);
  reader.optional_number("n", row.n);
  reader.optional_number("k", row.k);
  reader.optional_number("batch_count", row.batch_count);
  reader.optional_text("dtype", row.dtype);
  reader.optional_text("kernel", row.kernel);
  reader.optional_text("backend", row.backend);
  reader.optional_text("device", row.device);
  reader.optional_number("peak_tflops", row.peak_tflops);
  reader.optional_number("time_us_min", row.time_us_min);
  reader.optional_number("time_us_max", row.time_us_max);
  reader.optional_number("time_us_stddev", row.time_us_stddev);
  reader.optional_number("samples", row.samples);
  reader.optional_number("gbytes_per_s", row.gbytes_per_s);
  reader.optional_number("rel_err", row.rel_err);
  reader.optional_text("status", row.status);
  if (row.status.empty()) row.status = kStatusOk;
  reader.optional_number("ci95_us", row.ci95_us);
  reader.optional_number("passes", row.passes);
  reader.optional_number("sm_clock_mhz", row.sm_clock_mhz);
  reader.optional_number("sm_clock_end_mhz", row.sm_clock_end_mhz);
  reader.optional_number("temperature_c", row.temperature_c);
  reader.optional_number("power_w", row.power_w);
  reader.optional_text("timing", row.timing);
  if (row.timing.empty()) row.timing = kTimingEvents;
  reader.optional_number("operand_sets", row.operand_sets);
  reader.optional_text("launched", row.launched);
  reader.optional_text("note", row.note);
  if (reader.field("groups") != nullptr) {
    ProfileRow::Grouped& g = row.grouped.emplace();
    reader.optional_number("groups", g.groups);
    reader.optional_number("active_groups", g.active_groups);
    reader.optional_number("rows_min", g.rows_min);
    reader.optional_number("rows_mean", g.rows_mean);
    reader.optional_number("rows_max", g.rows_max);
    reader.optional_number("useful_rows", g.useful_rows);
    reader.optional_number("padded_rows", g.padded_rows);
    reader.optional_number("executed_rows", g.executed_rows);
    reader.optional_number("executed_tflops", g.executed_tflops);
    reader.optional_number("executed_utils", g.executed_utils);
    reader.optional_number("sol_us", g.sol_us);
    reader.optional_number("sol_fraction", g.sol_fraction);
    reader.optional_text("routing", g.routing);
    reader.optional_text("layout", g.layout);
    reader.optional_number("ep", g.ep);
  }

  // Skipped or failed points may carry no time; a measured one must.
  if (row.status == kStatusOk && !(std::isfinite(row.kernel_time_us) && row.kernel_time_us > 0)) {
    throw UserError(fmt::format("{}: kernel_time is {} on a row with status ok; a measured time must be positive",
                                where, row.kernel_time_us));
  }
  if (row.batch <= 0) {
    throw UserError(fmt::format("{}: batch is {}; M must be positive", where, row.batch));
  }
  return row;
}

}  // namespace shapescope
