// `profile --replay FILE.csv`: a recorded profile instead of a device. Each M is answered from the
// file's row (time, status, kernel name); an M the file lacks is `unsupported`. Reads shapescope's
// own profiles and the study's CSVs (batch,kernel_time,flops,utils[,kernel_name][,pass]) alike.
// The grid is the file's M values unless M options were given; `--m-search adaptive` searches it.
// The output is the recorded file's rows of the M asked for, in its own format, under its own name
// in the output folder (never over the recorded file), with a sidecar: the recorded one (if any)
// plus the `m_search` group of an adaptive search and a `replay` group naming the source.
// This is how the search is tested without a device, against recorded exhaustive profiles.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/csv.hpp"
#include "profiler/adaptive_search.hpp"
#include "profiler/m_search.hpp"

namespace shapescope::profiler {

struct RecordedProfile {
  std::filesystem::path path;
  csv::Table table;
  bool shapescope = false;                            // shapescope's schema (a status column), else the study's
  std::map<int64_t, std::vector<std::size_t>> rows;   // the table rows of each M (several passes: several rows)
  std::map<int64_t, SearchPoint> points;              // each M's answer: its fastest usable row, else its first row
  std::set<int64_t> unsupported;                      // M whose rows say the kernel does not run them
  std::vector<int64_t> m_values() const;
};

// Throws UserError naming the file and what is missing.
RecordedProfile read_recorded_profile(const std::filesystem::path& path);

// The answer for `m`: measured with its time, MFU, kernel name and relative ci95 where the file says; an M the
// file lacks is not measured (unsupported).
SearchPoint replay_point(const RecordedProfile& recorded, int64_t m);

struct ReplayRequest {
  std::filesystem::path recorded;
  std::filesystem::path out_dir = "replay";
  std::optional<std::vector<int64_t>> m_values;  // M options given: this grid instead of the file's M values
  MSearchOptions search;
  std::string command_line;
};

struct ReplayResult {
  std::filesystem::path csv;
  int64_t grid_points = 0;
  int64_t points = 0;          // M asked for (answered or unsupported)
  std::optional<AdaptiveResult> adaptive;
};

// Throws UserError, before writing anything, when the output would replace the recorded file.
ReplayResult run_replay(const ReplayRequest& request);

struct ProfileRequest;
// `profile --replay FILE`: the request's --out (default replay/), M options and search; prints what it wrote.
int replay_cli(const std::string& recorded, const ProfileRequest& request);

}  // namespace shapescope::profiler
