#include "profiler/replay.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/json_text.hpp"
#include "common/profile_schema.hpp"
#include "common/user_error.hpp"
#include "profiler/m_sweep.hpp"
#include "profiler/sidecar.hpp"
#include "profiler/sweep_setup.hpp"

namespace shapescope::profiler {

namespace {

double number(const std::string& text, const std::string& where) {
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw UserError(fmt::format("{}: '{}' is not a number", where, text));
}

// One row as the search sees it.
SearchPoint point_of_row(const RecordedProfile& recorded, std::size_t row) {
  const csv::Table& table = recorded.table;
  const std::string where = fmt::format("{}:{}", recorded.path.string(), table.row_lines[row]);
  SearchPoint point;
  if (recorded.shapescope) {
    const ProfileRow parsed = parse_profile_row(table.header, table.rows[row], where);
    point.measured = is_measured_status(parsed.status) && parsed.kernel_time_us > 0;
    point.time_us = parsed.kernel_time_us;
    point.utils = parsed.utils;
    point.kernel_name = parsed.kernel_name;
    point.rel_noise = parsed.kernel_time_us > 0 ? parsed.ci95_us / parsed.kernel_time_us : 0;
    return point;
  }
  const auto field = [&](const char* column) {
    const int at = table.column(column);
    return at >= 0 ? table.rows[row][std::size_t(at)] : std::string();
  };
  point.time_us = number(field("kernel_time"), where);
  point.utils = number(field("utils"), where);
  point.kernel_name = field("kernel_name");
  point.measured = point.time_us > 0;
  return point;
}

int64_t m_of_row(const RecordedProfile& recorded, std::size_t row) {
  const std::string& text = recorded.table.rows[row][std::size_t(recorded.table.column("batch"))];
  const std::string where = fmt::format("{}:{}", recorded.path.string(), recorded.table.row_lines[row]);
  const double value = number(text, where);
  // (NaN and values past int64's end are refused before the cast, which is undefined for them.)
  if (!(value >= 1 && value < 0x1p63) || value != double(int64_t(value)))
    throw UserError(fmt::format("{}: batch '{}' is not an M", where, text));
  return int64_t(value);
}

}  // namespace

std::vector<int64_t> RecordedProfile::m_values() const {
  std::vector<int64_t> ms;
  for (const auto& [m, of_m] : rows) ms.push_back(m);
  return ms;
}

RecordedProfile read_recorded_profile(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path))
    throw UserError(fmt::format("--replay {}: no such file; give a profile CSV", path.string()));
  RecordedProfile recorded;
  recorded.path = path;
  recorded.table = csv::read_file(path);
  const csv::Table& table = recorded.table;
  for (const char* column : {"batch", "kernel_time", "utils"}) {
    if (table.column(column) < 0)
      throw UserError(fmt::format("--replay {}: no '{}' column; give a shapescope profile or a study CSV "
                                  "(batch,kernel_time,flops,utils[,kernel_name])",
                                  path.string(), column));
  }
  recorded.shapescope = table.column("status") >= 0;
  for (std::size_t row = 0; row < table.rows.size(); ++row) recorded.rows[m_of_row(recorded, row)].push_back(row);
  for (const auto& [m, of_m] : recorded.rows) {
    std::optional<SearchPoint> fastest;
    for (std::size_t row : of_m) {
      SearchPoint point = point_of_row(recorded, row);
      if (recorded.shapescope && table.rows[row][std::size_t(table.column("status"))] == kStatusUnsupported)
        recorded.unsupported.insert(m);
      if (!fastest || (point.measured && (!fastest->measured || point.time_us < fastest->time_us)))
        fastest = std::move(point);
    }
    recorded.points.emplace(m, *fastest);
  }
  return recorded;
}

SearchPoint replay_point(const RecordedProfile& recorded, int64_t m) {
  const auto found = recorded.points.find(m);
  return found == recorded.points.end() ? SearchPoint{} : found->second;
}

ReplayResult run_replay(const ReplayRequest& request) {
  check_m_search_options(request.search);
  const RecordedProfile recorded = read_recorded_profile(request.recorded);
  ReplayResult result;
  result.csv = request.out_dir / request.recorded.filename();
  std::error_code ignored;
  if (std::filesystem::weakly_canonical(result.csv, ignored) == std::filesystem::weakly_canonical(request.recorded, ignored))
    throw UserError(fmt::format("--replay {}: the output would replace the recorded file; give another --out",
                                request.recorded.string()));
  std::vector<int64_t> grid = request.m_values ? *request.m_values : recorded.m_values();
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  result.grid_points = int64_t(grid.size());

  std::vector<int64_t> asked;
  AdaptiveOptions options;
  if (request.search.mode == MSearch::adaptive) {
    // An M the kernel does not run is known without measuring (on a device: KernelEntry::unsupported_reason),
    // so it is no candidate.
    for (int64_t m : grid)
      if (!recorded.unsupported.count(m)) options.grid.push_back(m);
    options.max_points = request.search.max_points;
    const auto start = std::chrono::steady_clock::now();
    if (request.search.time_budget_s > 0)
      options.out_of_time = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= request.search.time_budget_s;
      };
    result.adaptive = adaptive_search(options, [&](int64_t m) { return replay_point(recorded, m); });
    asked = result.adaptive->measured;
  } else {
    asked = grid;
  }
  result.points = int64_t(asked.size());
  std::sort(asked.begin(), asked.end());

  // The recorded rows of the M asked for, in the file's own format; an M it lacks is an unsupported row
  // where the format has a status.
  std::string text = csv::format_row(recorded.table.header);
  for (int64_t m : asked) {
    const auto found = recorded.rows.find(m);
    if (found != recorded.rows.end()) {
      for (std::size_t row : found->second) text += csv::format_row(recorded.table.rows[row]);
    } else if (recorded.shapescope) {
      ProfileRow row;
      row.batch = row.m = m;
      row.status = kStatusUnsupported;
      row.note = fmt::format("not in the replayed {}", request.recorded.filename().string());
      std::vector<std::string> fields;
      const std::vector<std::string> columns = profile_columns(), values = to_fields(row);
      for (const std::string& column : recorded.table.header) {
        const auto at = std::find(columns.begin(), columns.end(), column);
        fields.push_back(at == columns.end() ? "" : values[std::size_t(at - columns.begin())]);
      }
      text += csv::format_row(fields);
    }
  }
  std::filesystem::create_directories(request.out_dir);
  nlohmann::json sidecar = read_sidecar(request.recorded).value_or(nlohmann::json::object());
  sidecar["command_line"] = request.command_line;
  sidecar["replay"] = {{"recorded", request.recorded.string()}, {"date_utc", utc_now_iso8601()}};
  if (result.adaptive) {
    sidecar["m_search"] = m_search_json({options.grid, *result.adaptive});
  } else {
    sidecar.erase("m_search");
  }
  write_file_atomically(result.csv, text);
  write_file_atomically(sidecar_path(result.csv), json_text(sidecar, 2));
  return result;
}

int replay_cli(const std::string& recorded, const ProfileRequest& request) {
  ReplayRequest replay;
  replay.recorded = recorded;
  if (!request.out.empty()) replay.out_dir = request.out;
  const MSweepSpec& m = request.m_sweep;
  if (!m.preset.empty() || !m.ranges.empty() || !m.lists.empty()) replay.m_values = resolve_m_sweep(m);
  replay.search = request.m_search;
  replay.command_line = request.command_line;
  const ReplayResult result = run_replay(replay);
  fmt::print("replay: {} M of a grid of {} ({:.1f}%), {} search -> {}\n", result.points, result.grid_points,
             result.grid_points ? 100.0 * double(result.points) / double(result.grid_points) : 0.0,
             to_string(request.m_search.mode), result.csv.string());
  return 0;
}

}  // namespace shapescope::profiler
