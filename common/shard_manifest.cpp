#include "common/shard_manifest.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"
#include "common/csv.hpp"
#include "common/json_text.hpp"
#include "common/user_error.hpp"

namespace shapescope {

namespace {

constexpr const char* kManifestFormat = "shapescope-shard/1";
constexpr std::size_t kMissingListed = 8;

const std::regex& shard_folder_pattern() {
  static const std::regex pattern(R"(shard-(\d+)-of-(\d+))");
  return pattern;
}

std::vector<std::filesystem::path> shard_folders(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> found;
  std::error_code error;
  if (!std::filesystem::is_directory(folder, error)) return found;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    if (entry.is_directory() && std::regex_match(entry.path().filename().string(), shard_folder_pattern()) &&
        std::filesystem::exists(manifest_path(entry.path()))) {
      found.push_back(entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::set<int64_t> measured_m_values(const std::filesystem::path& csv_path) {
  const csv::Table table = csv::read_file(csv_path);
  const int batch = table.column("batch");
  if (batch < 0) throw UserError(fmt::format("{}: no batch column; not a shapescope profile", csv_path.string()));
  std::set<int64_t> m_values;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const std::string& text = table.rows[i][std::size_t(batch)];
    int64_t m = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), m);
    if (error != std::errc() || end != text.data() + text.size()) {
      throw UserError(fmt::format("{}:{}: batch '{}' is not an M; re-run the shard that wrote it", csv_path.string(),
                                  table.row_lines[i], text));
    }
    m_values.insert(m);
  }
  return m_values;
}

}  // namespace

std::string shard_folder_name(int index, int count) { return fmt::format("shard-{}-of-{}", index, count); }

std::filesystem::path manifest_path(const std::filesystem::path& shard_folder) { return shard_folder / "shard.json"; }

void write_manifest(const std::filesystem::path& shard_folder, const ShardManifest& manifest) {
  nlohmann::json points = nlohmann::json::object();
  for (const auto& [file, m_values] : manifest.points) points[file] = m_values;
  const nlohmann::json json = {{"format", kManifestFormat},     {"shard", manifest.index},
                               {"shards", manifest.count},      {"complete", manifest.complete},
                               {"plan", {{"files", manifest.plan_files}, {"m_values", manifest.plan_m_values}}},
                               {"points", points}};
  write_file_atomically(manifest_path(shard_folder), json_text(json, 1));
}

ShardManifest read_manifest(const std::filesystem::path& shard_folder) {
  const std::filesystem::path path = manifest_path(shard_folder);
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("{}: cannot read the shard manifest", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  try {
    const nlohmann::json json = nlohmann::json::parse(text.str());
    if (json.at("format") != kManifestFormat) throw std::runtime_error("unknown format");
    ShardManifest manifest;
    manifest.index = json.at("shard").get<int>();
    manifest.count = json.at("shards").get<int>();
    manifest.complete = json.at("complete").get<bool>();
    manifest.plan_files = json.at("plan").at("files").get<std::vector<std::string>>();
    manifest.plan_m_values = json.at("plan").at("m_values").get<std::vector<int64_t>>();
    for (const auto& [file, m_values] : json.at("points").items()) manifest.points[file] = m_values.get<std::vector<int64_t>>();
    return manifest;
  } catch (const std::exception& error) {
    throw UserError(fmt::format("{}: not a shapescope shard manifest ({}); delete the shard folder to measure it anew",
                                path.string(), error.what()));
  }
}

bool is_sharded_folder(const std::filesystem::path& folder) { return !shard_folders(folder).empty(); }

std::optional<ShardManifest> first_manifest(const std::filesystem::path& folder) {
  const std::vector<std::filesystem::path> folders = shard_folders(folder);
  if (folders.empty()) return std::nullopt;
  return read_manifest(folders.front());
}

int64_t ShardedProfile::missing_points() const {
  int64_t total = 0;
  for (const auto& [file, m_values] : missing) total += int64_t(m_values.size());
  return total;
}

std::string ShardedProfile::missing_summary() const {
  const int64_t planned = int64_t(plan_files.size() * plan_m_values.size());
  if (missing_points() == 0) return fmt::format("complete ({} points in {} shards)", planned, count);
  std::string text = fmt::format("{} of {} points missing", missing_points(), planned);
  if (!shards_absent.empty()) text += fmt::format(" (shards never started: {})", fmt::join(shards_absent, ","));
  std::size_t listed = 0;
  for (const auto& [file, m_values] : missing) {
    if (m_values.empty() || listed == kMissingListed) continue;
    ++listed;
    const std::size_t shown = std::min<std::size_t>(m_values.size(), 6);
    text += fmt::format("; {} M={}{}", file, fmt::join(m_values.begin(), m_values.begin() + long(shown), ","),
                        m_values.size() > shown ? fmt::format(",... ({} in all)", m_values.size()) : "");
  }
  return text;
}

ShardedProfile read_sharded_profile(const std::filesystem::path& folder) {
  const std::vector<std::filesystem::path> folders = shard_folders(folder);
  if (folders.empty()) {
    throw UserError(fmt::format("{}: no shard folders (shard-I-of-N/ with a shard.json); give the --out of a sharded "
                                "profile run",
                                folder.string()));
  }
  ShardedProfile profile;
  std::set<int> present;
  for (const std::filesystem::path& shard_folder : folders) {
    const ShardManifest manifest = read_manifest(shard_folder);
    if (shard_folder.filename() != shard_folder_name(manifest.index, manifest.count)) {
      throw UserError(fmt::format("{}: its manifest says shard {} of {}", shard_folder.string(), manifest.index,
                                  manifest.count));
    }
    if (profile.count == 0) {
      profile.count = manifest.count;
      profile.plan_files = manifest.plan_files;
      profile.plan_m_values = manifest.plan_m_values;
    } else if (manifest.count != profile.count || manifest.plan_files != profile.plan_files ||
               manifest.plan_m_values != profile.plan_m_values) {
      throw UserError(fmt::format("{}: shards of two different sweeps ({} and {}); keep one sweep per --out folder",
                                  folder.string(), folders.front().filename().string(),
                                  shard_folder.filename().string()));
    }
    present.insert(manifest.index);
  }
  for (int index = 0; index < profile.count; ++index)
    if (!present.count(index)) profile.shards_absent.push_back(index);
  for (const std::string& file : profile.plan_files) {
    std::set<int64_t> measured;
    for (const std::filesystem::path& shard_folder : folders) {
      const std::filesystem::path csv_path = shard_folder / file;
      if (!std::filesystem::exists(csv_path)) continue;
      profile.csvs[file].push_back(csv_path);
      const std::set<int64_t> m_values = measured_m_values(csv_path);
      measured.insert(m_values.begin(), m_values.end());
    }
    std::vector<int64_t>& missing = profile.missing[file];
    for (int64_t m : profile.plan_m_values)
      if (!measured.count(m)) missing.push_back(m);
  }
  return profile;
}

}  // namespace shapescope
