#include "profiler/sweep_runner.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "common/json_text.hpp"
#include "kernels/synthetic_operands.hpp"
#include "profiler/measurement_fingerprint.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/point_record.hpp"
#include "profiler/progress.hpp"
#include "profiler/repeat_sweep.hpp"
#include "profiler/resume.hpp"
#include "profiler/session_pool.hpp"

namespace shapescope::profiler {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

bool counts_as_ok(const ProfileRow& row) { return row.status == kStatusOk || row.status == kStatusThrottled; }

}  // namespace

FileSummary summarize_profile(const std::filesystem::path& csv, const std::vector<ProfileRow>& rows) {
  FileSummary summary;
  summary.csv = csv;
  summary.points = int64_t(rows.size());
  bool first = true;
  for (const ProfileRow& row : rows) {
    if (!counts_as_ok(row)) {
      ++summary.failed;
      continue;
    }
    ++summary.ok;
    if (first || row.utils > summary.best_utils) summary.best_utils = row.utils, summary.best_m = row.batch;
    if (first || row.utils < summary.worst_utils) summary.worst_utils = row.utils, summary.worst_m = row.batch;
    first = false;
  }
  return summary;
}

// A complete file left by a run killed between its last CSV write and its sidecar's: the sidecar still says
// interrupted. Nothing is left to measure, so only that flag is set right.
void mark_sidecar_complete(const std::filesystem::path& csv) {
  std::optional<nlohmann::json> sidecar = read_sidecar(csv);
  if (!sidecar || !sidecar->contains("sweep") || !(*sidecar)["sweep"].is_object()) return;
  nlohmann::json& interrupted = (*sidecar)["sweep"]["interrupted"];
  if (interrupted == false) return;
  interrupted = false;
  write_file_atomically(sidecar_path(csv), json_text(*sidecar, 2));
}

bool close_profile_file(ProfileWriter& file, SidecarContent& sidecar, const std::filesystem::path& csv,
                        int64_t resumed, double wall_s, SweepResult& result) {
  sidecar.timing.wall_s = wall_s;
  sidecar.interrupted = interrupt_requested();
  file.flush();
  write_sidecar(csv, sidecar);
  FileSummary summary = summarize_profile(csv, file.rows());
  summary.resumed = resumed;
  summary.timing = sidecar.timing;
  result.timing.wall_s += sidecar.timing.wall_s;
  result.timing.setup_s += sidecar.timing.setup_s;
  result.timing.timed_s += sidecar.timing.timed_s;
  result.files.push_back(summary);
  result.interrupted = result.interrupted || sidecar.interrupted;
  return sidecar.interrupted;
}

namespace {

std::string gib(std::size_t bytes) { return fmt::format("{:.2f} GiB", double(bytes) / double(1ull << 30)); }

// Measures one M (or explains why not) into `row`; returns the timed kernel seconds.
double measure_point(kernels::Device& device, SessionPool& pool, const SweepPlan& plan, ProfileRow& row) {
  const kernels::GemmShape shape{row.m, row.n, row.k, row.batch_count};
  kernels::GemmSession& session = pool.first();
  const std::size_t needed = session.activation_bytes(row.m), free_bytes = device.free_memory_bytes();
  if (needed > free_bytes) {
    row.status = kStatusSkippedOom;
    row.note = fmt::format("activations and output need {} but {} is free", gib(needed), gib(free_bytes));
    return 0;
  }
  try {
    const uint64_t seed = activation_seed(plan.seed, row.m);
    auto gemm = session.prepare(row.m, seed);
    row.kernel_name = gemm->launch_name();
    const kernels::CheckResult check = gemm->check();
    Rotation rotation;
    rotation.sets = {gemm.get()};
    if (plan.measure.timing == kernels::TimingMode::graph && !plan.measure.hot) {
      rotation = prepare_rotation(device, pool, *gemm, row.m, seed);
      row.note = rotation.note;
    }
    const Measurement m = measure(device, rotation.sets, plan.measure);
    record_measurement(row, m, check, shape.flops(), gemm->min_bytes(), plan.check_threshold);
    return m.timed_us_total / 1e6;
  } catch (const kernels::UnsupportedShape& refused) {  // the library itself refused this M
    row.status = kStatusUnsupported;
    row.note = refused.what();
    return 0;
  } catch (const std::exception& error) {
    row.status = kStatusError;
    row.note = error.what();
    return 0;
  }
}

}  // namespace

uint64_t activation_seed(uint64_t seed, int64_t m) { return kernels::synthetic::mix(seed + uint64_t(m)); }

std::string profile_file_name(const GemmProblem& problem, const std::string& kernel, kernels::TimingMode timing) {
  const std::string batch = problem.batch_count > 1 ? fmt::format("_B{}", problem.batch_count) : "";
  const std::string mode = timing == kernels::TimingMode::events ? "" : "_" + kernels::to_string(timing);
  return fmt::format("{}_{}_tp{}_N{}_K{}{}_{}{}.csv", problem.model, problem.module, problem.tp, problem.n, problem.k,
                     batch, kernel, mode);
}

const std::vector<int64_t>& m_values_of_file(const SweepPlan& plan, const std::string& csv_name) {
  static const std::vector<int64_t> none;
  if (!plan.shard_m_values) return plan.m_values;
  const auto found = plan.shard_m_values->find(csv_name);
  return found == plan.shard_m_values->end() ? none : found->second;
}

SweepResult run_sweep(kernels::Device& device, const SweepPlan& plan) {
  SweepResult result;
  const kernels::DeviceInfo info = device.info();
  PeakResolver peaks(plan.peak_mode, plan.peak_override_tflops);
  const int passes = std::max(1, plan.repeat);
  int64_t points = 0;
  for (const GemmProblem& problem : plan.problems)
    for (const std::string& kernel_name : plan.kernels)
      points += int64_t(m_values_of_file(plan, profile_file_name(problem, kernel_name, plan.measure.timing)).size());
  Progress progress(points * passes, plan.progress);
  device.set_programmatic_launch(plan.programmatic_launch);
  // Drift must not pose as shape: start from a settled clock and flag points measured below it.
  const double steady_clock_mhz =
      plan.steady_warm_up && device.kind() != kernels::BackendKind::cpu  // CUDA and HIP GPUs
          ? warm_up_for_sweep(device, plan.m_values, plan.problems, plan.kernels, plan.seed)
          : 0;
  result.floors = measure_timing_floors(device, plan.measure);
  remove_stale_temporaries(plan.out_dir);

  for (const GemmProblem& problem : plan.problems) {
    for (const std::string& kernel_name : plan.kernels) {
      const kernels::KernelEntry& kernel = kernels::find_kernel(kernel_name);
      const std::filesystem::path csv = plan.out_dir / profile_file_name(problem, kernel_name, plan.measure.timing);
      const std::vector<int64_t>& m_values = m_values_of_file(plan, csv.filename().string());
      if (m_values.empty()) continue;  // another shard's file
      std::optional<ProfileWriter> file = ProfileWriter::open(csv, interrupt_requested);
      if (!file) {  // interrupted while another run held the file
        result.interrupted = true;
        progress.finish();
        return result;
      }
      const MeasurementFingerprint fingerprint =
          measurement_fingerprint(plan.measure, plan.seed, plan.programmatic_launch, kernel_name, info);
      std::vector<ProfileRow> rows = resumable_rows(csv, fingerprint, m_values);  // again under the lock: files change
      std::set<int64_t> done;
      for (const ProfileRow& row : rows) done.insert(row.batch);
      const int64_t resumed = int64_t(std::count_if(m_values.begin(), m_values.end(),
                                                    [&](int64_t m) { return done.count(m) > 0; }));
      const std::string label_prefix = csv.stem().string();
      if (resumed == int64_t(m_values.size())) {
        // Nothing left to measure: the file stays as it is.
        mark_sidecar_complete(csv);
        for (int64_t m : m_values)
          for (int pass = 0; pass < passes; ++pass)
            progress.advance(fmt::format("{} M={} (already measured)", label_prefix, m));
        FileSummary summary = summarize_profile(csv, rows);
        summary.resumed = resumed;
        result.files.push_back(summary);
        continue;
      }

      SidecarContent sidecar;
      sidecar.device = info;
      sidecar.kernel = &kernel;
      sidecar.problem = problem;
      sidecar.measure = plan.measure;
      sidecar.seed = plan.seed;
      sidecar.fingerprint = fingerprint;
      sidecar.command_line = plan.command_line;
      sidecar.floors = result.floors;
      sidecar.programmatic_launch = plan.programmatic_launch;

      const auto setup_start = Clock::now();
      sidecar.peak = peaks.peak_for(device, kernel);
      sidecar.clock = device.sample_clock();
      std::unique_ptr<SessionPool> sessions;
      std::string open_error;
      try {
        // Setup can take seconds (the CPU's peak, weights): an interrupt during it skips the rest.
        if (!interrupt_requested()) {
          sessions = std::make_unique<SessionPool>(kernel, device,
                                                   kernels::WeightShape{problem.n, problem.k, problem.batch_count},
                                                   plan.seed);
        }
      } catch (const std::exception& error) {
        open_error = error.what();
      }
      sidecar.timing.setup_s = seconds_since(setup_start);
      // Before any row: a CSV never exists without the sidecar that says how its rows were measured.
      sidecar.interrupted = true;
      write_sidecar(csv, sidecar);

      const auto sweep_start = Clock::now();
      std::map<int64_t, std::vector<ProfileRow>> pass_rows;  // --repeat: a row is kept once all its passes ran
      for (const ScheduledPoint& point : repeat_schedule(m_values, passes, plan.seed)) {
        const int64_t m = point.m;
        if (interrupt_requested()) break;
        if (done.count(m)) {
          progress.advance(fmt::format("{} M={} (already measured)", label_prefix, m));
          continue;
        }
        ProfileRow row;
        row.batch = row.m = m;
        row.n = problem.n;
        row.k = problem.k;
        row.batch_count = problem.batch_count;
        row.kernel_name = kernel_name;
        row.dtype = kernel.dtype;
        row.kernel = kernel_name;
        row.backend = kernels::to_string(kernel.backend);
        row.device = info.name;
        row.peak_tflops = sidecar.peak.tflops;
        row.timing = kernels::to_string(plan.measure.timing);
        const kernels::GemmShape shape{m, problem.n, problem.k, problem.batch_count};
        const auto unsupported = kernel.unsupported_reason ? kernel.unsupported_reason(shape) : std::nullopt;
        if (unsupported) {  // a shape the kernel refuses is not an error, whether or not its session opened
          row.status = kStatusUnsupported;
          row.note = *unsupported;
        } else if (sessions) {
          sidecar.timing.timed_s += measure_point(device, *sessions, plan, row);
        } else {
          row.status = kStatusError;
          row.note = "opening the kernel failed: " + open_error;
        }
        flag_off_steady_clock(row, steady_clock_mhz);
        progress.advance(passes > 1 ? fmt::format("{} M={} pass {}/{}", label_prefix, m, point.pass + 1, passes)
                                    : fmt::format("{} M={}", label_prefix, m));
        std::vector<ProfileRow>& of_m = pass_rows[m];
        of_m.push_back(row);
        if (int(of_m.size()) < passes) continue;
        file->add(passes > 1 ? combine_passes(of_m) : row);
      }
      sessions.reset();
      if (close_profile_file(*file, sidecar, csv, resumed, seconds_since(sweep_start), result)) {
        progress.finish();
        return result;
      }
    }
  }
  progress.finish();
  return result;
}

}  // namespace shapescope::profiler
