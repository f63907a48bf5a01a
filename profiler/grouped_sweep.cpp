#include "profiler/grouped_sweep.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/device_peaks.hpp"
#include "common/interrupt.hpp"
#include "common/user_error.hpp"
#include "kernels/copy_bandwidth.hpp"
#include "kernels/synthetic_operands.hpp"
#include "profiler/format_choice.hpp"
#include "profiler/noise_history.hpp"
#include "profiler/profile_csv.hpp"
#include "profiler/point_record.hpp"
#include "profiler/profile_file_start.hpp"
#include "profiler/profile_writer.hpp"
#include "profiler/progress.hpp"
#include "profiler/repeat_sweep.hpp"
#include "profiler/session_pool.hpp"
#include "profiler/sidecar.hpp"
#include "profiler/sweep_points.hpp"
#include "profiler/timing_floors.hpp"

namespace shapescope::profiler {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What a row says about its groups, before anything runs.
ProfileRow::Grouped describe_groups(const GroupedSeries& series, const kernels::GroupedShape& shape) {
  ProfileRow::Grouped g;
  g.groups = shape.groups();
  g.active_groups = shape.active_groups();
  g.rows_min = shape.min_rows();
  g.rows_max = shape.max_rows();
  g.useful_rows = shape.useful_rows();
  g.rows_mean = double(g.useful_rows) / double(std::max<int64_t>(g.groups, 1));
  g.padded_rows = shape.padded_rows();
  g.routing = series.routing;
  g.layout = shape.layout_text();
  g.ep = series.problem.ep;
  return g;
}

// The fastest the GPU could do it: the useful FLOPs at the peak, or the fewest bytes at the copy bandwidth.
double speed_of_light_us(const kernels::GroupedShape& shape, double peak_tflops, double copy_bytes_per_us,
                         double min_bytes) {
  const double compute_us = peak_tflops > 0 ? shape.useful_flops() / (peak_tflops * 1e6) : 0;
  const double memory_us = copy_bytes_per_us > 0 ? min_bytes / copy_bytes_per_us : 0;
  return std::max(compute_us, memory_us);
}

struct PointContext {
  const GroupedSweepPlan& plan;
  double copy_bytes_per_us;
};

// Measures one M (or explains why not) into `row`; returns the timed kernel seconds.
double measure_grouped_point(kernels::Device& device, GroupedSessionPool& pool, const PointContext& context,
                             const GroupedPoint& point, NoiseHistory& noise, ProfileRow& row) {
  const kernels::GroupedShape& shape = point.shape;
  kernels::GroupedGemmSession& session = pool.first();
  if (shape.useful_rows() == 0) {
    row.status = kStatusNoRows;
    row.note = fmt::format("no (token, expert) pair reached this GPU's {} experts at {} tokens", shape.groups(), point.m);
    return 0;
  }
  const std::size_t needed = session.activation_bytes(shape), free_bytes = device.free_memory_bytes();
  if (needed > free_bytes) {
    row.status = kStatusSkippedOom;
    row.note = fmt::format("activations and output need {:.2f} GiB but {:.2f} GiB is free", double(needed) / (1 << 30),
                           double(free_bytes) / (1 << 30));
    return 0;
  }
  try {
    const uint64_t seed = kernels::synthetic::mix(context.plan.seed + uint64_t(point.m));
    auto gemm = session.prepare(shape, seed);
    row.kernel_name = gemm->launch_name();
    const kernels::CheckResult check = gemm->check();
    Rotation rotation;
    rotation.sets = {gemm.get()};
    if (context.plan.measure.timing == kernels::TimingMode::graph && !context.plan.measure.hot) {
      rotation = prepare_rotation(device, pool, *gemm, shape, seed);
      row.note = rotation.note;
    }
    MeasureOptions measure_options = context.plan.measure;
    measure_options.first_set_runs_done = 1;  // the check ran it
    const Measurement m = measure(device, rotation.sets, measure_options, &noise);
    record_measurement(row, m, check, shape.useful_flops(), gemm->min_bytes(), context.plan.check_threshold);
    ProfileRow::Grouped& g = *row.grouped;
    g.executed_rows = gemm->executed_rows();
    g.executed_tflops = 2.0 * double(gemm->executed_rows()) * double(shape.n) * double(shape.k) / m.median_us / 1e6;
    g.executed_utils = row.peak_tflops > 0 ? g.executed_tflops / row.peak_tflops : 0;
    g.sol_us = speed_of_light_us(shape, row.peak_tflops, context.copy_bytes_per_us, gemm->min_bytes());
    g.sol_fraction = g.sol_us / m.median_us;
    return m.timed_us_total / 1e6;
  } catch (const kernels::UnsupportedShape& refused) {
    row.status = kStatusUnsupported;
    row.note = refused.what();
    return 0;
  } catch (const std::exception& error) {
    row.status = kStatusError;
    row.note = error.what();
    return 0;
  }
}

// The exact group sizes of every M of the series (the sidecar's record of the routing).
nlohmann::json points_json(const GroupedSeries& series) {
  nlohmann::json points = nlohmann::json::array();
  for (const GroupedPoint& point : series.points) {
    nlohmann::json entry = {{"m", point.m}, {"rows", point.shape.rows}, {"layout", point.shape.layout_text()}};
    if (point.token_seed != 0) entry["token_seed"] = point.token_seed;
    points.push_back(std::move(entry));
  }
  return points;
}

// Warm the GPU on the largest expert GEMM with the dense kernel whose peak the grouped kernels use.
double warm_up(kernels::Device& device, const GroupedSweepPlan& plan) {
  std::vector<GemmProblem> problems;
  std::set<int64_t> ms;
  for (const GroupedSeries& series : plan.series) {
    problems.push_back(series.problem);
    problems.back().batch_count = 1;
    for (const GroupedPoint& point : series.points) ms.insert(std::max<int64_t>(point.shape.useful_rows(), 1));
  }
  std::vector<std::string> dense;
  for (const std::string& name : plan.kernels) dense.push_back(kernels::find_grouped_kernel(name).peak_kernel);
  return warm_up_for_sweep(device, std::vector<int64_t>(ms.begin(), ms.end()), problems, dense, plan.seed);
}

}  // namespace

std::string grouped_file_name(const GroupedSeries& series, const std::string& kernel, kernels::TimingMode timing) {
  const GemmProblem& p = series.problem;
  const std::string mode = timing == kernels::TimingMode::events ? "" : "_" + kernels::to_string(timing);
  const std::string format = format_label(p.format);
  if (series.preset)
    return fmt::format("{}_{}_{}{}_{}{}.csv", p.model, p.module, series.layout_label, format, kernel, mode);
  const std::string parallel = p.ep > 1 ? fmt::format("ep{}", p.ep) : fmt::format("tp{}", p.tp);
  return fmt::format("{}_{}_{}_E{}_N{}_K{}_{}_{}{}_{}{}.csv", p.model, p.module, parallel, p.local_experts, p.n, p.k,
                     series.routing_label, series.layout_label, format, kernel, mode);
}

std::string speed_of_light_summary(const SweepResult& result) {
  std::string text = "speed of light: max(useful FLOPs at the peak, fewest bytes at the measured copy bandwidth)\n";
  for (const FileSummary& file : result.files) {
    std::vector<const ProfileRow*> measured;
    const std::vector<ProfileRow> rows = read_profile_csv(file.csv);
    for (const ProfileRow& row : rows)
      if (is_measured_status(row.status) && row.grouped) measured.push_back(&row);
    if (measured.empty()) continue;
    const std::string name = file.csv.stem().string();
    if (measured.size() <= 2) {
      for (const ProfileRow* row : measured)
        text += fmt::format("  {} M={}: {:.2f} us, {:.1f} TFLOP/s, {:.0f}% of {:.2f} us\n", name, row->batch,
                            row->kernel_time_us, row->tflops, 100 * row->grouped->sol_fraction, row->grouped->sol_us);
      continue;
    }
    std::vector<const ProfileRow*> by_fraction = measured;
    std::sort(by_fraction.begin(), by_fraction.end(), [](const ProfileRow* a, const ProfileRow* b) {
      return a->grouped->sol_fraction < b->grouped->sol_fraction;
    });
    const ProfileRow* best = by_fraction.back();
    text += fmt::format("  {}: median {:.0f}% of speed of light over {} points, best {:.0f}% at M={}\n", name,
                        100 * by_fraction[by_fraction.size() / 2]->grouped->sol_fraction, by_fraction.size(),
                        100 * best->grouped->sol_fraction, best->batch);
  }
  return text;
}

SweepResult run_grouped_sweep(kernels::Device& device, const GroupedSweepPlan& plan) {
  SweepResult result;
  const kernels::DeviceInfo info = device.info();
  PeakResolver peaks(plan.peak_mode, plan.peak_override_tflops);
  int64_t total_points = 0;
  for (const GroupedSeries& series : plan.series) total_points += int64_t(series.points.size() * plan.kernels.size());
  Progress progress(total_points, plan.progress);
  device.set_programmatic_launch(plan.programmatic_launch);
  const double steady_clock_mhz =
      plan.steady_warm_up && device.kind() == kernels::BackendKind::cuda ? warm_up(device, plan) : 0;
  result.floors = measure_timing_floors(device, plan.measure);
  const double copy_bytes_per_us = kernels::measure_copy_bandwidth(device);
  remove_stale_temporaries(plan.out_dir);
  const SweepRecord record{info, plan.measure, plan.seed, plan.programmatic_launch, plan.command_line, result.floors};

  for (const GroupedSeries& series : plan.series) {
    for (const std::string& kernel_name : plan.kernels) {
      const kernels::GroupedKernelEntry& kernel = kernels::find_grouped_kernel(kernel_name);
      const std::filesystem::path csv = plan.out_dir / grouped_file_name(series, kernel_name, plan.measure.timing);
      std::vector<int64_t> wanted;
      std::map<int64_t, const GroupedPoint*> point_of_m;
      for (const GroupedPoint& point : series.points) {
        wanted.push_back(point.m);
        point_of_m.emplace(point.m, &point);
      }
      std::optional<ProfileFileStart> start = start_profile_file(csv, kernel_name, series.problem, wanted, record);
      if (!start) {  // interrupted while another run held the file
        result.interrupted = true;
        return result;
      }
      if (start->complete) {
        keep_complete_file(*start, csv, 1, progress, result);
        continue;
      }
      SidecarContent& sidecar = start->sidecar;
      sidecar.grouped_kernel = &kernel;
      const BlockFormatId format = format_run_by(kernel, series.problem.format);
      sidecar.format = format;
      nlohmann::json grouped = plan.description;
      grouped["routing"] = series.routing;
      grouped["ep"] = series.problem.ep;
      grouped["experts"] = series.problem.experts;
      grouped["local_experts"] = series.problem.local_experts;
      grouped["top_k"] = series.problem.top_k;
      grouped["expert_width"] = series.problem.expert_width;
      grouped["shared_experts"] = series.problem.shared_experts;
      grouped["copy_bandwidth_gb_per_s"] = copy_bytes_per_us / 1e3;
      grouped["points"] = points_json(series);
      sidecar.grouped = std::move(grouped);

      const auto setup_start = Clock::now();
      const kernels::KernelEntry& peak_kernel = kernels::find_kernel(kernel.peak_kernel);
      sidecar.peak = peaks.peak_for(device, peak_kernel);
      sidecar.clock = device.sample_clock();
      std::unique_ptr<GroupedSessionPool> sessions;
      std::string open_error;
      try {
        sessions = std::make_unique<GroupedSessionPool>(
            kernel, device, kernels::GroupedWeightShape{series.problem.local_experts, series.problem.n, series.problem.k, format},
            plan.seed);
      } catch (const std::exception& error) {
        open_error = error.what();
      }
      write_sidecar_before_rows(csv, sidecar, setup_start);

      const PointContext context{plan, copy_bytes_per_us};
      NoiseHistory noise;  // this file's points so far, for a criterion that pools their spread
      const auto sweep_start = Clock::now();
      FilePoints file_points{*start, progress, csv.stem().string(), steady_clock_mhz, plan.m_search, {}};
      sweep_points(file_points, wanted, 1, plan.seed, [&](int64_t m) {
        const GroupedPoint& point = *point_of_m.at(m);
        PointOutcome outcome{unmeasured_row(sidecar, kernel_name, kernel.dtype, kernel.backend, m), {}, 0};
        ProfileRow& row = outcome.row;
        row.format = to_string(format);
        row.n = point.shape.n;
        row.k = point.shape.k;
        row.grouped = describe_groups(series, point.shape);
        const auto unsupported = kernel.unsupported_reason ? kernel.unsupported_reason(point.shape) : std::nullopt;
        if (!record_unmeasured(row, unsupported, sessions != nullptr, open_error))
          outcome.timed_s = measure_grouped_point(device, *sessions, context, point, noise, row);
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
