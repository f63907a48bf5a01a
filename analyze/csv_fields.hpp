// Typed access to the fields of a parsed CSV row, for the readers: every error
// names file:line and the column, so the user can find and fix the row.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/csv.hpp"

namespace shapescope::analyze {

class CsvRecord {
 public:
  CsvRecord(const csv::Table& table, std::size_t row, const std::string& source);

  std::string where() const;  // "file:line"
  bool has(std::string_view column) const;
  const std::string& text(std::string_view column) const;  // "" when the column is absent
  int64_t integer(std::string_view column) const;          // throws unless a whole integer
  double number(std::string_view column) const;            // throws unless finite
  double positive_time(std::string_view column) const;     // throws unless finite and > 0

 private:
  const csv::Table& table_;
  std::size_t row_;
  const std::string& source_;
};

// The names in `required` that `table` lacks, comma separated ("" when none).
std::string missing_columns(const csv::Table& table, const std::vector<std::string>& required);

}  // namespace shapescope::analyze
