#include "profiler/profile_file_start.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/interrupt.hpp"
#include "profiler/measurement_fingerprint.hpp"
#include "profiler/resume.hpp"

namespace shapescope::profiler {

std::optional<ProfileFileStart> start_profile_file(const std::filesystem::path& csv, const std::string& kernel_name,
                                                   const GemmProblem& problem, const std::vector<int64_t>& wanted,
                                                   const SweepRecord& record) {
  std::optional<ProfileWriter> file = ProfileWriter::open(csv, interrupt_requested);
  if (!file) return std::nullopt;
  SidecarContent sidecar;
  sidecar.device = record.device;
  sidecar.problem = problem;
  sidecar.measure = record.measure;
  sidecar.seed = record.seed;
  sidecar.fingerprint =
      measurement_fingerprint(record.measure, record.seed, record.programmatic_launch, kernel_name, record.device,
                              record.passes);
  sidecar.command_line = record.command_line;
  sidecar.floors = record.floors;
  sidecar.programmatic_launch = record.programmatic_launch;
  std::vector<ProfileRow> kept = resumable_rows(csv, sidecar.fingerprint, wanted);  // under the lock: files change
  std::set<int64_t> done;
  for (const ProfileRow& row : kept) done.insert(row.batch);
  const int64_t resumed = int64_t(std::count_if(wanted.begin(), wanted.end(), [&](int64_t m) { return done.count(m) > 0; }));
  const bool complete = resumed == int64_t(wanted.size());
  return ProfileFileStart{std::move(*file), wanted, std::move(kept), std::move(done), resumed, complete,
                          std::move(sidecar)};
}

void keep_complete_file(const ProfileFileStart& start, const std::filesystem::path& csv, int passes,
                        Progress& progress, SweepResult& result) {
  mark_sidecar_complete(csv);
  for (int64_t m : start.wanted)
    for (int pass = 0; pass < passes; ++pass)
      progress.advance(fmt::format("{} M={} (already measured)", csv.stem().string(), m));
  FileSummary summary = summarize_profile(csv, start.kept);
  summary.resumed = start.resumed;
  result.files.push_back(summary);
}

ProfileRow unmeasured_row(const SidecarContent& sidecar, const std::string& kernel_name, const std::string& dtype,
                          kernels::BackendKind backend, int64_t m) {
  ProfileRow row;
  row.batch = row.m = m;
  row.kernel_name = kernel_name;
  row.dtype = dtype;
  row.kernel = kernel_name;
  row.backend = kernels::to_string(backend);
  row.device = sidecar.device.name;
  row.peak_tflops = sidecar.peak.tflops;
  row.timing = kernels::to_string(sidecar.measure.timing);
  return row;
}

void write_sidecar_before_rows(const std::filesystem::path& csv, SidecarContent& sidecar,
                               std::chrono::steady_clock::time_point setup_start) {
  sidecar.timing.setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
  sidecar.interrupted = true;
  write_sidecar(csv, sidecar);
}

}  // namespace shapescope::profiler
