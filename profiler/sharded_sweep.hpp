// A SweepPlan narrowed to one shard: the shard's points (profiler/shard_plan), measured into
// `--out/shard-I-of-N/` beside its manifest (common/shard_manifest), and a folder of shards merged
// back into one profile per file (`profile --merge`).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/shard_manifest.hpp"
#include "kernels/kernel.hpp"
#include "profiler/shard_plan.hpp"
#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

// Every (file, M) point of `plan`, with its predicted cost on `device`.
std::vector<SweepPoint> sweep_points(const SweepPlan& plan, const kernels::DeviceInfo& device);

// Narrows `plan` (out_dir: the sweep's --out) to shard `index` of the cut by `shares` (shard_plan.hpp:
// even_shares or work_queue_shares): out_dir becomes the shard's subfolder, created, with its manifest written. Throws UserError when that folder's manifest was cut
// from another plan, or its files may not be resumed (resume.hpp).
void narrow_to_shard(SweepPlan& plan, const kernels::DeviceInfo& device, int index, const std::vector<double>& shares);
// True when the shard's manifest says every point was measured.
bool shard_complete(const std::filesystem::path& out, int index, int count);
// After a run of a narrowed plan that was not interrupted.
void mark_shard_complete(const SweepPlan& narrowed);

struct MergeResult {
  ShardedProfile shards;
  std::vector<std::filesystem::path> written;  // merged CSVs at the top of the folder
  std::vector<FileSummary> files;              // their points, ok, failed, best and worst MFU
};
// Writes `<folder>/<file>.csv` (+ sidecar) for every file any shard measured: the shards' rows together,
// the sidecar of the first shard holding the file with a `shards` list (each shard's device, UUID, clock
// and peak). Throws UserError when the shards measured one file differently (measurement fingerprints).
MergeResult merge_shards(const std::filesystem::path& folder);

}  // namespace shapescope::profiler
