#include "profiler/sweep_runner.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "common/json_text.hpp"
#include "common/shape_axes.hpp"
#include "kernels/synthetic_operands.hpp"
#include "profiler/format_choice.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/point_phases.hpp"
#include "profiler/point_record.hpp"
#include "profiler/predicted_boundaries.hpp"
#include "profiler/profile_file_start.hpp"
#include "profiler/progress.hpp"
#include "profiler/repeat_sweep.hpp"
#include "profiler/session_pool.hpp"
#include "profiler/sweep_points.hpp"

namespace shapescope::profiler {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

FileSummary summarize_profile(const std::filesystem::path& csv, const std::vector<ProfileRow>& rows) {
  FileSummary summary;
  summary.csv = csv;
  summary.points = int64_t(rows.size());
  bool first = true;
  for (const ProfileRow& row : rows) {
    if (!is_measured_status(row.status)) {
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
  using namespace sidecar_key;
  if (!sidecar || !sidecar->contains(kSweep) || !(*sidecar)[kSweep].is_object()) return;
  nlohmann::json& interrupted = (*sidecar)[kSweep][kInterrupted];
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
  result.phases.merge(sidecar.phases);
  result.files.push_back(summary);
  result.interrupted = result.interrupted || sidecar.interrupted;
  return sidecar.interrupted;
}

namespace {

std::string gib(std::size_t bytes) { return fmt::format("{:.2f} GiB", double(bytes) / double(1ull << 30)); }

// Measures one M (or explains why not) into `row`; where its time went when it was measured (the write and
// the rest of the point are the caller's).
std::optional<PointPhases> measure_point(kernels::Device& device, SessionPool& pool, const SweepPlan& plan,
                                         NoiseHistory& noise, ProfileRow& row) {
  const kernels::GemmShape shape{row.m, row.n, row.k, row.batch_count};
  kernels::GemmSession& session = pool.first();
  const std::size_t needed = session.activation_bytes(row.m), free_bytes = device.free_memory_bytes();
  if (needed > free_bytes) {
    row.status = kStatusSkippedOom;
    row.note = fmt::format("activations and output need {} but {} is free", gib(needed), gib(free_bytes));
    return std::nullopt;
  }
  try {
    PointPhases phases;
    auto phase_start = Clock::now();
    auto end_phase = [&](PointPhase phase) {
      phases[phase] += seconds_since(phase_start);
      phase_start = Clock::now();
    };
    const uint64_t seed = activation_seed(plan.seed, row.m);
    auto gemm = session.prepare(row.m, seed);
    row.kernel_name = gemm->launch_name();
    end_phase(PointPhase::prepare);
    // The comparison with the float64 reference is host work: on a GPU it runs on another thread while the
    // device is timed; on the CPU it would take cores from the kernel being timed, so it runs first.
    std::function<kernels::CheckResult()> compare = gemm->begin_check();
    std::optional<kernels::CheckResult> check;
    std::future<kernels::CheckResult> comparing;
    if (device.kind() != kernels::BackendKind::cpu) {
      comparing = std::async(std::launch::async, std::move(compare));
    } else {
      check = compare();
    }
    end_phase(PointPhase::check);
    Rotation rotation;
    rotation.sets = {gemm.get()};
    if (plan.measure.timing == kernels::TimingMode::graph && !plan.measure.hot) {
      rotation = prepare_rotation(device, pool, *gemm, row.m, seed);
      row.note = rotation.note;
    }
    end_phase(PointPhase::rotation);
    MeasureOptions measure_options = plan.measure;
    measure_options.first_set_runs_done = 1;  // the check ran it
    const Measurement m = measure(device, rotation.sets, measure_options, &noise);
    phases[PointPhase::clocks] = m.clocks_s;
    phases[PointPhase::warm_up] = m.warm_up_s;
    phases[PointPhase::timed] = m.timed_us_total / 1e6;
    phases[PointPhase::between_samples] = m.between_samples_s;
    phase_start = Clock::now();
    if (!check) check = comparing.get();  // what the comparison still takes after the samples
    end_phase(PointPhase::check);
    record_measurement(row, m, *check, shape.flops(), gemm->min_bytes(), plan.check_threshold);
    rotation = {};
    gemm.reset();
    end_phase(PointPhase::release);
    return phases;
  } catch (const kernels::UnsupportedShape& refused) {  // the library itself refused this M
    row.status = kStatusUnsupported;
    row.note = refused.what();
    return std::nullopt;
  } catch (const std::exception& error) {
    row.status = kStatusError;
    row.note = error.what();
    return std::nullopt;
  }
}

}  // namespace

uint64_t activation_seed(uint64_t seed, int64_t m) { return kernels::synthetic::mix(seed + uint64_t(m)); }

std::string profile_file_name(const GemmProblem& problem, const std::string& kernel, kernels::TimingMode timing) {
  const std::string layer =
      is_raw_shape(problem) ? "shape" : fmt::format("{}_{}_tp{}", problem.model, problem.module, problem.tp);
  const std::string mode = timing == kernels::TimingMode::events ? "" : "_" + kernels::to_string(timing);
  return fmt::format("{}_{}{}_{}{}.csv", layer, shape_label(problem), format_label(problem.format), kernel, mode);
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
  const int passes = std::max(1, plan.repeat);
  int64_t points = 0;
  for (const GemmProblem& problem : plan.problems)
    for (const std::string& kernel_name : plan.kernels)
      points += int64_t(m_values_of_file(plan, profile_file_name(problem, kernel_name, plan.measure.timing)).size());
  Progress progress(points * passes, plan.progress);
  device.set_programmatic_launch(plan.programmatic_launch);
  const std::shared_ptr<DeviceBaseline> baseline = plan.baseline ? plan.baseline : measure_device_baseline(device, plan);
  PeakResolver& peaks = baseline->peaks;
  const double steady_clock_mhz = baseline->steady_clock_mhz;
  result.floors = baseline->floors;
  remove_stale_temporaries(plan.out_dir);
  const SweepRecord record{info, plan.measure, plan.seed, plan.programmatic_launch, plan.command_line, result.floors,
                           passes};

  for (const GemmProblem& problem : plan.problems) {
    for (const std::string& kernel_name : plan.kernels) {
      const kernels::KernelEntry& kernel = kernels::find_kernel(kernel_name);
      const std::filesystem::path csv = plan.out_dir / profile_file_name(problem, kernel_name, plan.measure.timing);
      const std::vector<int64_t>& m_values = m_values_of_file(plan, csv.filename().string());
      if (m_values.empty()) continue;  // another shard's file
      std::optional<ProfileFileStart> start = start_profile_file(csv, kernel_name, problem, m_values, record);
      if (!start) {  // interrupted while another run held the file
        result.interrupted = true;
        return result;
      }
      if (start->complete) {
        keep_complete_file(*start, csv, passes, progress, result);
        continue;
      }
      SidecarContent& sidecar = start->sidecar;
      sidecar.kernel = &kernel;
      const BlockFormatId format = format_run_by(kernel, problem.format);
      sidecar.format = format;

      const auto setup_start = Clock::now();
      sidecar.peak = peaks.peak_for(device, kernel);
      sidecar.clock = device.sample_clock();
      std::unique_ptr<SessionPool> sessions;
      std::string open_error;
      try {
        // Setup can take seconds (the CPU's peak, weights): an interrupt during it skips the rest.
        if (!interrupt_requested()) {
          sessions = std::make_unique<SessionPool>(kernel, device,
                                                   kernels::WeightShape{problem.n, problem.k, problem.batch_count, format},
                                                   plan.seed);
        }
      } catch (const std::exception& error) {
        open_error = error.what();
      }
      write_sidecar_before_rows(csv, sidecar, setup_start);

      const auto sweep_start = Clock::now();
      FilePoints points{*start, progress, csv.stem().string(), steady_clock_mhz, plan.m_search, {}};
      // Adaptive: an M the kernel does not run is no candidate (known without measuring).
      std::vector<int64_t> candidates = m_values;
      if (plan.m_search.mode == MSearch::adaptive) {
        std::erase_if(candidates, [&](int64_t m) {
          return kernel.unsupported_reason &&
                 kernel.unsupported_reason(kernels::GemmShape{m, problem.n, problem.k, problem.batch_count});
        });
        points.boundaries = predicted_boundaries(kernel, problem, info.multiprocessors, m_values.back());
      }
      NoiseHistory noise;  // this file's points so far, for a criterion that pools their spread
      sweep_points(points, candidates, passes, plan.seed, [&](int64_t m) {
        PointOutcome outcome{unmeasured_row(sidecar, kernel_name, kernel.dtype, kernel.backend, m), {}, 0};
        ProfileRow& row = outcome.row;
        row.format = to_string(format);
        row.n = problem.n;
        row.k = problem.k;
        row.batch_count = problem.batch_count;
        const kernels::GemmShape shape{m, problem.n, problem.k, problem.batch_count};
        const auto unsupported = kernel.unsupported_reason ? kernel.unsupported_reason(shape) : std::nullopt;
        if (!unsupported && kernel.config_for) record_config(row, kernel.config_for(shape));
        if (!record_unmeasured(row, unsupported, sessions != nullptr, open_error)) {
          outcome.phases = measure_point(device, *sessions, plan, noise, row);
          if (outcome.phases) outcome.timed_s = (*outcome.phases)[PointPhase::timed];
        }
        return outcome;
      });
      sessions.reset();
      if (close_profile_file(start->file, sidecar, csv, start->resumed, seconds_since(sweep_start), result))
        return result;
    }
  }
  return result;
}

}  // namespace shapescope::profiler
