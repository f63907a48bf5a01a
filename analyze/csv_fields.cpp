#include "analyze/csv_fields.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope::analyze {

CsvRecord::CsvRecord(const csv::Table& table, std::size_t row, const std::string& source)
    : table_(table), row_(row), source_(source) {}

std::string CsvRecord::where() const { return fmt::format("{}:{}", source_, table_.row_lines.at(row_)); }

bool CsvRecord::has(std::string_view column) const { return table_.column(column) >= 0; }

const std::string& CsvRecord::text(std::string_view column) const {
  static const std::string empty;
  const int index = table_.column(column);
  return index < 0 ? empty : table_.rows[row_][static_cast<std::size_t>(index)];
}

int64_t CsvRecord::integer(std::string_view column) const {
  const std::string& field = text(column);
  int64_t value = 0;
  const char* end = field.data() + field.size();
  const auto [stop, error] = std::from_chars(field.data(), end, value);
  if (field.empty() || error != std::errc() || stop != end) {
    throw UserError(fmt::format("{}: column '{}' holds '{}', not an integer; fix or remove the row", where(), column,
                                field));
  }
  return value;
}

double CsvRecord::number(std::string_view column) const {
  const std::string& field = text(column);
  double value = 0;
  const char* end = field.data() + field.size();
  const auto [stop, error] = std::from_chars(field.data(), end, value);
  if (field.empty() || error != std::errc() || stop != end || !std::isfinite(value)) {
    throw UserError(fmt::format("{}: column '{}' holds '{}', not a finite number; fix or remove the row", where(),
                                column, field));
  }
  return value;
}

double CsvRecord::positive_time(std::string_view column) const {
  const double value = number(column);
  if (value <= 0) {
    throw UserError(fmt::format("{}: column '{}' is {}; a measured time must be positive, fix or remove the row",
                                where(), column, text(column)));
  }
  return value;
}

std::string missing_columns(const csv::Table& table, const std::vector<std::string>& required) {
  std::string missing;
  for (const std::string& name : required) {
    if (table.column(name) >= 0) continue;
    if (!missing.empty()) missing += ",";
    missing += name;
  }
  return missing;
}

}  // namespace shapescope::analyze
