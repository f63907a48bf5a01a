#include "profiler/sharded_sweep.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/json_text.hpp"
#include "common/user_error.hpp"
#include "profiler/profile_csv.hpp"
#include "profiler/resume.hpp"
#include "profiler/sidecar.hpp"

namespace shapescope::profiler {

namespace {

// Files merged at once by `profile --merge`.
constexpr std::size_t kMergeThreads = 8;

// A shard's rows of `file` as its manifest planned them: each M is one of the shard's own points (not another
// shard's, not outside the plan), once, with a status profile writes. Names the CSV, the M and the reason.
void check_shard_rows(const std::filesystem::path& csv, const std::string& file, const std::vector<ProfileRow>& rows) {
  const ShardManifest manifest = read_manifest(csv.parent_path());
  const auto planned = manifest.points.find(file);
  std::set<int64_t> seen;
  for (const ProfileRow& row : rows) {
    auto refuse = [&](const std::string& reason) {
      throw UserError(fmt::format("{}: M={} {}; re-run shard {} of {} (delete the file first) or remove the row",
                                  csv.string(), row.batch, reason, manifest.index, manifest.count));
    };
    const bool in_plan = std::find(manifest.plan_m_values.begin(), manifest.plan_m_values.end(), row.batch) !=
                         manifest.plan_m_values.end();
    if (!in_plan) refuse("is not an M of the sweep's plan");
    if (planned == manifest.points.end() ||
        std::find(planned->second.begin(), planned->second.end(), row.batch) == planned->second.end())
      refuse("belongs to another shard");
    if (!seen.insert(row.batch).second) refuse("appears twice");
    if (std::find_if(std::begin(kStatuses), std::end(kStatuses), [&](const char* s) { return row.status == s; }) ==
        std::end(kStatuses))
      refuse(fmt::format("has status '{}', not one profile writes", row.status));
  }
}

// One file of a folder of shards, merged at the top of `folder`: the shards' rows together, the sidecar of the
// first shard holding it with a `shards` list. Returns its summary.
FileSummary merge_file(const std::filesystem::path& folder, const std::string& file,
                       const std::vector<std::filesystem::path>& csvs) {
  std::vector<ProfileRow> rows;
  std::optional<nlohmann::json> merged_sidecar;
  nlohmann::json shards = nlohmann::json::array();
  for (const std::filesystem::path& csv : csvs) {
    const std::vector<ProfileRow> shard_rows = read_profile_csv(csv);
    check_shard_rows(csv, file, shard_rows);
    rows = merge_rows(std::move(rows), shard_rows);
    const std::optional<nlohmann::json> sidecar = read_sidecar(csv);
    if (!sidecar) throw UserError(fmt::format("{}: no sidecar beside it; re-run its shard", csv.string()));
    const nlohmann::json fingerprint = sidecar->value(sidecar_key::kMeasurementFingerprint, nlohmann::json());
    if (!merged_sidecar) {
      merged_sidecar = sidecar;
    } else if ((*merged_sidecar).value(sidecar_key::kMeasurementFingerprint, nlohmann::json()) != fingerprint) {
      throw UserError(fmt::format("{}: {} and {} measured it differently (measurement fingerprints differ); "
                                  "re-run one shard with the other's options",
                                  file, csvs.front().parent_path().filename().string(),
                                  csv.parent_path().filename().string()));
    }
    shards.push_back({{"folder", csv.parent_path().filename().string()},
                      {sidecar_key::kDevice, sidecar->value(sidecar_key::kDevice, nlohmann::json())},
                      {sidecar_key::kClockAtStart, sidecar->value(sidecar_key::kClockAtStart, nlohmann::json())},
                      {sidecar_key::kPeak, sidecar->value(sidecar_key::kPeak, nlohmann::json())},
                      {sidecar_key::kSweep, sidecar->value(sidecar_key::kSweep, nlohmann::json())}});
  }
  (*merged_sidecar)[sidecar_key::kShards] = shards;
  const std::filesystem::path out_csv = folder / file;
  write_file_atomically(sidecar_path(out_csv), json_text(*merged_sidecar, 2));  // never a CSV without its sidecar
  write_profile_csv(out_csv, rows);
  return summarize_profile(out_csv, rows);
}

ShardManifest manifest_for(const SweepPlan& plan, const std::vector<SweepPoint>& points, int index,
                           const std::vector<double>& shares) {
  ShardManifest manifest;
  manifest.index = index;
  manifest.count = int(shares.size());
  for (const GemmProblem& problem : plan.problems)
    for (const std::string& kernel : plan.kernels)
      manifest.plan_files.push_back(profile_file_name(problem, kernel, plan.measure.timing));
  manifest.plan_m_values = plan.m_values;
  manifest.points = shard_m_values(points, shares, index);
  return manifest;
}

}  // namespace

std::vector<SweepPoint> sweep_points(const SweepPlan& plan, const kernels::DeviceInfo& device) {
  std::vector<SweepPoint> points;
  for (const GemmProblem& problem : plan.problems) {
    for (const std::string& kernel : plan.kernels) {
      const std::string& dtype = kernels::find_kernel(kernel).dtype;
      const CostRates rates = cost_rates(device.name, dtype);
      const std::string file = profile_file_name(problem, kernel, plan.measure.timing);
      for (int64_t m : plan.m_values) points.push_back({file, m, point_cost_seconds(problem, dtype, m, rates, plan.measure)});
    }
  }
  return points;
}

void narrow_to_shard(SweepPlan& plan, const kernels::DeviceInfo& device, int index, const std::vector<double>& shares) {
  const int count = int(shares.size());
  const std::filesystem::path folder = plan.out_dir / shard_folder_name(index, count);
  ShardManifest manifest = manifest_for(plan, sweep_points(plan, device), index, shares);
  if (const std::optional<ShardManifest> other = first_manifest(plan.out_dir)) {
    if (other->count != count || other->plan_files != manifest.plan_files ||
        other->plan_m_values != manifest.plan_m_values) {
      throw UserError(fmt::format("{} holds the shards of another sweep ({} of {} shards, {} files x {} M values); use "
                                  "another --out, or delete its shard-*-of-* folders",
                                  plan.out_dir.string(), shard_folder_name(other->index, other->count), other->count,
                                  other->plan_files.size(), other->plan_m_values.size()));
    }
  }
  ensure_writable_directory(folder);
  if (std::filesystem::exists(manifest_path(folder))) {
    const ShardManifest existing = read_manifest(folder);
    if (existing.plan_files != manifest.plan_files || existing.plan_m_values != manifest.plan_m_values ||
        existing.points != manifest.points) {
      throw UserError(fmt::format("{} holds shard {} of another sweep (other files, M values or cost split); use "
                                  "another --out, or delete the folder to measure it anew",
                                  folder.string(), index));
    }
    manifest.complete = existing.complete;
  }
  plan.out_dir = folder;
  plan.shard_m_values = manifest.points;
  check_resumable(plan, device);
  write_manifest(folder, manifest);
}

bool shard_complete(const std::filesystem::path& out, int index, int count) {
  const std::filesystem::path folder = out / shard_folder_name(index, count);
  return std::filesystem::exists(manifest_path(folder)) && read_manifest(folder).complete;
}

void mark_shard_complete(const SweepPlan& narrowed) {
  ShardManifest manifest = read_manifest(narrowed.out_dir);
  manifest.complete = true;
  write_manifest(narrowed.out_dir, manifest);
}

MergeResult merge_shards(const std::filesystem::path& folder) {
  MergeResult result;
  result.shards = read_sharded_profile(folder);
  const std::vector<std::pair<std::string, std::vector<std::filesystem::path>>> files(result.shards.csvs.begin(),
                                                                                      result.shards.csvs.end());
  // Files side by side: each one's two atomic writes wait on fsync, not on the CPU.
  std::vector<std::optional<FileSummary>> merged(files.size());
  std::vector<std::exception_ptr> errors(files.size());
  std::atomic<std::size_t> next{0};
  auto merge_some = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++) {
      try {
        merged[i] = merge_file(folder, files[i].first, files[i].second);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < std::min(files.size(), kMergeThreads); ++t) threads.emplace_back(merge_some);
  for (std::thread& thread : threads) thread.join();
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);  // the first file in name order that failed
    result.written.push_back(merged[i]->csv);
    result.files.push_back(*merged[i]);
  }
  return result;
}

}  // namespace shapescope::profiler
