#include "common/csv.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope::csv {

int Table::column(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// A single pass over the text: fields end at a comma or at an unquoted line break
// (LF or CRLF). Empty lines are skipped, so a trailing newline (or several) is harmless.
class Parser {
 public:
  Parser(std::string_view text, std::string_view source) : text_(text), source_(source) {
    if (text_.substr(0, kUtf8Bom.size()) == kUtf8Bom) text_.remove_prefix(kUtf8Bom.size());
  }

  Table run() {
    Table table;
    std::vector<std::string> record;
    std::size_t record_line = 0;
    while (next_record(record, record_line)) {
      if (table.header.empty()) {
        table.header = std::move(record);
        continue;
      }
      if (record.size() != table.header.size()) {
        throw UserError(fmt::format("{}:{}: {} fields but the header has {}; quote fields that contain commas",
                                    source_, record_line, record.size(), table.header.size()));
      }
      table.rows.push_back(std::move(record));
      table.row_lines.push_back(record_line);
      record = {};
    }
    if (table.header.empty()) {
      throw UserError(fmt::format("{}:1: empty file, expected a header row", source_));
    }
    return table;
  }

 private:
  bool at_end() const { return pos_ >= text_.size(); }

  // Length of the line break (LF or CRLF) at pos_, or 0.
  std::size_t line_break_length() const {
    if (text_[pos_] == '\n') return 1;
    if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') return 2;
    return 0;
  }

  bool take_line_break() {
    const std::size_t length = line_break_length();
    if (length == 0) return false;
    pos_ += length;
    ++line_;
    return true;
  }

  bool next_record(std::vector<std::string>& record, std::size_t& record_line) {
    while (!at_end() && take_line_break()) {
    }
    if (at_end()) return false;
    record_line = line_;
    record.clear();
    while (true) {
      record.push_back(next_field());
      if (at_end()) return true;
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (take_line_break()) return true;
      throw UserError(fmt::format("{}:{}: unexpected character after a field", source_, line_));
    }
  }

  std::string next_field() {
    if (!at_end() && text_[pos_] == '"') return quoted_field();
    std::string field;
    while (!at_end()) {
      const char c = text_[pos_];
      if (c == ',' || line_break_length() > 0) break;
      field.push_back(c);  // a stray quote inside an unquoted field is kept literally, as most readers do
      ++pos_;
    }
    return field;
  }

  std::string quoted_field() {
    const std::size_t start_line = line_;
    ++pos_;  // opening quote
    std::string field;
    while (true) {
      if (at_end()) {
        throw UserError(fmt::format("{}:{}: unterminated quoted field; close it with a double quote", source_,
                                    start_line));
      }
      const char c = text_[pos_++];
      if (c == '"') {
        if (!at_end() && text_[pos_] == '"') {
          field.push_back('"');
          ++pos_;
          continue;
        }
        break;
      }
      if (c == '\n') ++line_;
      field.push_back(c);
    }
    if (!at_end() && text_[pos_] != ',' && line_break_length() == 0) {
      throw UserError(fmt::format("{}:{}: text after a closing quote; double quotes inside a quoted field (\"\")",
                                  source_, line_));
    }
    return field;
  }

  std::string_view text_;
  std::string_view source_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
};

}  // namespace

Table parse(std::string_view text, std::string_view source) { return Parser(text, source).run(); }

Table read_file(const std::filesystem::path& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw UserError(fmt::format("{}: no such file; check the path", path.string()));
  }
  if (error) throw UserError(fmt::format("{}: {}; check the path", path.string(), error.message()));
  if (status.type() == std::filesystem::file_type::directory) {
    throw UserError(fmt::format("{}: a folder, not a CSV file; pass the file", path.string()));
  }
  if (status.type() != std::filesystem::file_type::regular) {
    throw UserError(fmt::format("{}: not a regular file (a device or a pipe); pass a CSV file", path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UserError(fmt::format("cannot read {}: {}; check the path", path.string(), std::strerror(errno)));
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) {
    throw UserError(fmt::format("cannot read {}: {}; check the file", path.string(), std::strerror(errno)));
  }
  return parse(content.str(), path.string());
}

std::string quote(std::string_view field) {
  const bool needs_quotes = field.find_first_of(",\"\r\n") != std::string_view::npos ||
                            (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!needs_quotes) return std::string(field);
  std::string quoted = "\"";
  for (const char c : field) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

std::string format_row(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) line.push_back(',');
    line += quote(fields[i]);
  }
  line.push_back('\n');
  return line;
}

}  // namespace shapescope::csv
