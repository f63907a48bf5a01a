// RFC 4180 CSV: quoted fields may hold commas, quotes ("") and newlines.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace shapescope::csv {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> row_lines;  // 1-based line of each row's start, for messages
  // Index of a header column, or -1.
  int column(std::string_view name) const;
};

// Throws UserError "source:line: what is wrong" on malformed input
// (unterminated quote, text after a closing quote, row width != header width).
Table parse(std::string_view text, std::string_view source);
// Also throws UserError, naming the path, when it is missing, a folder, or no regular file.
Table read_file(const std::filesystem::path& path);

// Quotes a field only when it needs it (comma, quote, CR/LF, leading/trailing space).
std::string quote(std::string_view field);
std::string format_row(const std::vector<std::string>& fields);  // ends with "\n"

}  // namespace shapescope::csv
