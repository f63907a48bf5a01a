#include "common/profile_schema.hpp"

#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>
#include <type_traits>
#include <variant>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

// One CSV column: its name and the member of the record it holds. Every column's reader, writer and place
// in the header come from the tables below.
template <typename Record>
struct Column {
  const char* name;
  // An optional number is written empty when absent, and read back absent when empty.
  std::variant<int64_t Record::*, double Record::*, std::optional<double> Record::*, std::string Record::*> member;
  bool required = false;  // the study's batch,kernel_time,flops,utils; any other keeps its default when absent
};

// The file order; the first five columns are exactly the study's.
const std::vector<Column<ProfileRow>>& row_columns() {
  using R = ProfileRow;
  static const std::vector<Column<R>> columns = {
      {"batch", &R::batch, true}, {"kernel_time", &R::kernel_time_us, true}, {"flops", &R::tflops, true},
      {"utils", &R::utils, true}, {"kernel_name", &R::kernel_name},
      // The GEMM and what ran it.
      {"m", &R::m}, {"n", &R::n}, {"k", &R::k}, {"batch_count", &R::batch_count}, {"dtype", &R::dtype},
      {"kernel", &R::kernel}, {"backend", &R::backend}, {"device", &R::device}, {"peak_tflops", &R::peak_tflops},
      // The samples' spread, the bandwidth and the check.
      {"time_us_min", &R::time_us_min}, {"time_us_max", &R::time_us_max}, {"time_us_stddev", &R::time_us_stddev},
      {"samples", &R::samples}, {"gbytes_per_s", &R::gbytes_per_s}, {"rel_err", &R::rel_err}, {"status", &R::status},
      // Extensions: readers treat them as optional.
      {"ci95_us", &R::ci95_us}, {"passes", &R::passes}, {"sm_clock_mhz", &R::sm_clock_mhz},
      {"sm_clock_end_mhz", &R::sm_clock_end_mhz}, {"temperature_c", &R::temperature_c}, {"power_w", &R::power_w},
      {"power_capped_pct", &R::power_capped_pct}, {"power_limit_w", &R::power_limit_w},
      {"sm_clock_sampled_min_mhz", &R::sm_clock_sampled_min_mhz},
      {"sm_clock_sampled_mean_mhz", &R::sm_clock_sampled_mean_mhz},
      {"timing", &R::timing}, {"operand_sets", &R::operand_sets}, {"launched", &R::launched},
      // The kernel's launch configuration.
      {"tile_m", &R::tile_m}, {"tile_n", &R::tile_n}, {"cluster_m", &R::cluster_m}, {"cluster_n", &R::cluster_n},
      {"cluster_k", &R::cluster_k}, {"split_k", &R::split_k},
      // The block format that ran; dtype stays the class of its math.
      {"format", &R::format},
      {"note", &R::note},
  };
  return columns;
}

const std::vector<Column<ProfileRow::Grouped>>& grouped_columns() {
  using G = ProfileRow::Grouped;
  static const std::vector<Column<G>> columns = {
      {"groups", &G::groups}, {"active_groups", &G::active_groups}, {"rows_min", &G::rows_min},
      {"rows_mean", &G::rows_mean}, {"rows_max", &G::rows_max}, {"useful_rows", &G::useful_rows},
      {"padded_rows", &G::padded_rows}, {"executed_rows", &G::executed_rows}, {"executed_tflops", &G::executed_tflops},
      {"executed_utils", &G::executed_utils}, {"sol_us", &G::sol_us}, {"sol_fraction", &G::sol_fraction},
      {"routing", &G::routing}, {"layout", &G::layout}, {"ep", &G::ep},
  };
  return columns;
}

template <typename Record>
std::vector<std::string> names_of(const std::vector<Column<Record>>& columns) {
  std::vector<std::string> names;
  for (const Column<Record>& column : columns) names.emplace_back(column.name);
  return names;
}

// fmt's "{}" is the shortest text that reads back to the same double, so a
// written row re-parses to exactly the measured values.
std::string text_of(double value) { return fmt::format("{}", value); }
std::string text_of(int64_t value) { return fmt::format("{}", value); }
std::string text_of(const std::optional<double>& value) { return value ? text_of(*value) : std::string(); }
const std::string& text_of(const std::string& value) { return value; }

template <typename Record>
std::vector<std::string> fields_of(const Record& record, const std::vector<Column<Record>>& columns) {
  std::vector<std::string> fields;
  fields.reserve(columns.size());
  for (const Column<Record>& column : columns)
    fields.push_back(std::visit([&](auto member) -> std::string { return text_of(record.*member); }, column.member));
  return fields;
}

}  // namespace

const std::vector<std::string>& profile_columns() {
  static const std::vector<std::string> names = names_of(row_columns());
  return names;
}

std::vector<std::string> to_fields(const ProfileRow& row) { return fields_of(row, row_columns()); }

const std::vector<std::string>& grouped_profile_columns() {
  static const std::vector<std::string> names = names_of(grouped_columns());
  return names;
}

std::vector<std::string> to_grouped_fields(const ProfileRow::Grouped& grouped) {
  return fields_of(grouped, grouped_columns());
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

  // A required column holds a number; an optional one, absent or empty, keeps the record's default.
  template <typename Record>
  void read(const Column<Record>& column, Record& record) const {
    std::visit(
        [&](auto member) {
          auto& target = record.*member;
          using Value = std::remove_reference_t<decltype(target)>;
          if constexpr (std::is_same_v<Value, std::string>) {
            optional_text(column.name, target);
          } else if constexpr (std::is_same_v<Value, std::optional<double>>) {
            const std::string* value = field(column.name);
            if (value != nullptr && !value->empty()) target = parse<double>(column.name, *value);
          } else if (column.required) {
            target = required_number<Value>(column.name);
          } else {
            optional_number(column.name, target);
          }
        },
        column.member);
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
  for (const Column<ProfileRow>& column : row_columns())
    if (column.required) reader.read(column, row);
  row.m = row.batch;  // the study's files have no m column: M is the batch
  for (const Column<ProfileRow>& column : row_columns())
    if (!column.required) reader.read(column, row);
  if (row.status.empty()) row.status = kStatusOk;
  if (row.timing.empty()) row.timing = kTimingEvents;
  if (reader.field("groups") != nullptr) {
    ProfileRow::Grouped& grouped = row.grouped.emplace();
    for (const Column<ProfileRow::Grouped>& column : grouped_columns()) reader.read(column, grouped);
  }

  // Skipped or failed points may carry no time; a measured one must.
  if (is_measured_status(row.status) && !(std::isfinite(row.kernel_time_us) && row.kernel_time_us > 0)) {
    throw UserError(fmt::format("{}: kernel_time is {} on a row with status {}; a measured time must be positive",
                                where, row.kernel_time_us, row.status));
  }
  if (row.batch <= 0) {
    throw UserError(fmt::format("{}: batch is {}; M must be positive", where, row.batch));
  }
  return row;
}

}  // namespace shapescope
