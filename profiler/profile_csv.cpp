#include "profiler/profile_csv.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/csv.hpp"
#include "common/user_error.hpp"

namespace shapescope::profiler {

std::vector<ProfileRow> read_profile_csv(const std::filesystem::path& path) {
  std::vector<ProfileRow> rows;
  if (!std::filesystem::exists(path)) return rows;
  if (std::filesystem::is_directory(path)) {
    throw UserError(fmt::format("{} is a folder where the profile CSV goes; rename it or use another --out",
                                path.string()));
  }
  const csv::Table table = csv::read_file(path);
  if (table.column("status") < 0) {
    throw UserError(fmt::format("{} is not a shapescope profile (no 'status' column; a study-format CSV?); move it "
                                "away or use another --out",
                                path.string()));
  }
  for (size_t i = 0; i < table.rows.size(); ++i) {
    rows.push_back(
        parse_profile_row(table.header, table.rows[i], fmt::format("{}:{}", path.string(), table.row_lines[i])));
  }
  return rows;
}

std::vector<ProfileRow> merge_rows(std::vector<ProfileRow> on_disk, const std::vector<ProfileRow>& measured) {
  std::set<int64_t> replaced;
  for (const ProfileRow& row : measured) replaced.insert(row.batch);
  std::erase_if(on_disk, [&](const ProfileRow& row) { return replaced.count(row.batch) > 0; });
  on_disk.insert(on_disk.end(), measured.begin(), measured.end());
  return on_disk;
}

void write_profile_csv(const std::filesystem::path& path, std::vector<ProfileRow> rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const ProfileRow& a, const ProfileRow& b) { return a.batch < b.batch; });
  // A grouped profile carries the grouped columns after the common ones; a dense one never does.
  const bool grouped = std::any_of(rows.begin(), rows.end(), [](const ProfileRow& row) { return row.grouped.has_value(); });
  std::vector<std::string> header = profile_columns();
  if (grouped) header.insert(header.end(), grouped_profile_columns().begin(), grouped_profile_columns().end());
  std::string text = csv::format_row(header);
  for (const ProfileRow& row : rows) {
    std::vector<std::string> fields = to_fields(row);
    if (grouped) {
      const std::vector<std::string> extra = to_grouped_fields(row.grouped.value_or(ProfileRow::Grouped{}));
      fields.insert(fields.end(), extra.begin(), extra.end());
    }
    text += csv::format_row(fields);
  }
  write_file_atomically(path, text);
}

}  // namespace shapescope::profiler
