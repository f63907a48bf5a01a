// A sharded sweep on disk: `--out DIR` holds one subfolder per shard, `shard-I-of-N/`, each an
// ordinary profile folder (its own CSVs, sidecars, locks) plus `shard.json`, the manifest: the whole
// plan (files x M values) and this shard's points. Shards never share a file, so the per-file locks,
// resume fingerprints and atomic writes work inside each subfolder unchanged, and any reader can
// tell which points of the plan no shard has measured yet. Read by `profile --merge` and `analyze DIR`.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shapescope {

struct ShardManifest {
  int index = 0;
  int count = 1;
  std::vector<std::string> plan_files;     // every CSV file name of the sweep
  std::vector<int64_t> plan_m_values;      // every file sweeps these M values
  std::map<std::string, std::vector<int64_t>> points;  // this shard's M values per file
  bool complete = false;                   // the shard's run ended with every point measured
};

// "shard-3-of-8".
std::string shard_folder_name(int index, int count);
std::filesystem::path manifest_path(const std::filesystem::path& shard_folder);
void write_manifest(const std::filesystem::path& shard_folder, const ShardManifest& manifest);
// Throws UserError naming the file when it is missing or malformed.
ShardManifest read_manifest(const std::filesystem::path& shard_folder);

// A folder of shards read as one profile.
struct ShardedProfile {
  int count = 0;                          // N
  std::vector<int> shards_absent;         // shard indices with no manifest (never started)
  std::vector<std::string> plan_files;
  std::vector<int64_t> plan_m_values;
  std::map<std::string, std::vector<std::filesystem::path>> csvs;    // per file name, the shards' CSVs holding it
  std::map<std::string, std::vector<int64_t>> missing;               // per file name, plan M in no shard's CSV
  int64_t missing_points() const;
  // "12 of 1560 points missing: <file> M=1,2,...; ..." (at most a few listed), or "complete (1560 points)".
  std::string missing_summary() const;
};

// True when `folder` holds at least one `shard-*-of-*` subfolder with a manifest.
bool is_sharded_folder(const std::filesystem::path& folder);
// The manifest of the first shard subfolder of `folder` (by name), nullopt when there is none.
std::optional<ShardManifest> first_manifest(const std::filesystem::path& folder);
// Reads every shard's manifest and the M of every row of its CSVs. Throws UserError when the shards
// were cut from different plans or different N (two sweeps in one --out).
ShardedProfile read_sharded_profile(const std::filesystem::path& folder);

}  // namespace shapescope
