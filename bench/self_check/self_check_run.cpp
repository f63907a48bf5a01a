#include "bench/self_check/self_check_run.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "analyze/analysis.hpp"
#include "analyze/analyze_command.hpp"
#include "bench/self_check/self_check_estimate.hpp"
#include "common/atomic_file.hpp"
#include "common/csv.hpp"
#include "common/interrupt.hpp"
#include "common/json_text.hpp"
#include "common/user_error.hpp"
#include "profiler/device_baseline.hpp"
#include "profiler/device_lock.hpp"
#include "profiler/scale_out.hpp"
#include "profiler/sweep_setup.hpp"

namespace shapescope::self_check {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kSettingsFile = "self_check.json";

std::filesystem::path raw_dir(const std::filesystem::path& out) { return out / "raw"; }
std::filesystem::path analyses_dir(const std::filesystem::path& out) { return out / "analyses"; }

GemmProblem raw_problem(const CheckShape& shape) {
  GemmProblem problem;
  problem.n = shape.n;
  problem.k = shape.k;
  return problem;
}

std::filesystem::path profile_path(const std::filesystem::path& out, const CheckShape& shape, const std::string& kernel,
                                   const RunSettings& settings) {
  return raw_dir(out) /
         profiler::profile_file_name(raw_problem(shape), kernel, kernels::parse_timing_mode(settings.timing));
}

// Rows of `csv` at an M of `m_values` (measured or failed: a rerun does not measure them again).
int64_t rows_at(const std::filesystem::path& csv, const std::set<int64_t>& m_values) {
  if (!std::filesystem::exists(csv)) return 0;
  const csv::Table table = csv::read_file(csv);
  const int m_column = table.column("m");
  if (m_column < 0) return 0;
  int64_t rows = 0;
  for (const auto& row : table.rows) {
    try {
      rows += m_values.count(std::stoll(row[std::size_t(m_column)]));
    } catch (const std::exception&) {  // a malformed M is the resume check's to report
    }
  }
  return rows;
}

// "N,K" of every shape of the list, in order: what a folder is measured for.
std::vector<std::string> shape_keys(const ShapeList& list) {
  std::vector<std::string> keys;
  for (const CheckShape& shape : list.shapes) keys.push_back(fmt::format("{},{}", shape.n, shape.k));
  return keys;
}

nlohmann::json settings_json(const RunSettings& s, const ShapeList& list) {
  return {{"backend", s.backend}, {"ours", s.ours},       {"baseline", s.baseline},
          {"timing", s.timing},   {"m_range", s.m_range}, {"shapes", shape_keys(list)}};
}

// OUT/self_check.json. Throws UserError when it is missing or malformed.
nlohmann::json read_manifest(const std::filesystem::path& out) {
  const std::filesystem::path path = out / kSettingsFile;
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("{} not found; give the --out folder of a self-check run", path.string()));
  try {
    nlohmann::json manifest = nlohmann::json::parse(in);
    manifest.at("shapes").get<std::vector<std::string>>();
    return manifest;
  } catch (const nlohmann::json::exception& error) {
    throw UserError(fmt::format("{}: {}; remove it and rerun the self-check", path.string(), error.what()));
  }
}

std::string settings_text(const RunSettings& s) {
  return fmt::format("backend {}, kernels {} and {}, timing {}, M {}", s.backend, s.ours, s.baseline, s.timing,
                     s.m_range);
}

std::string duration_text(double seconds) {
  const auto whole = int64_t(seconds + 0.5);
  return whole >= 60 ? fmt::format("{}m{:02}s", whole / 60, whole % 60) : fmt::format("{}s", whole);
}

// The time budget as a one-shot SIGALRM whose handler raises the interrupt flag, as SIGINT's does: the sweep stops
// after its current point and keeps it.
volatile sig_atomic_t budget_spent = 0;
extern "C" void on_budget_spent(int) {
  budget_spent = 1;
  set_interrupt_requested(true);
}

class BudgetAlarm {
 public:
  explicit BudgetAlarm(double seconds) {
    budget_spent = 0;
    if (seconds <= 0) return;
    struct sigaction action {};
    action.sa_handler = on_budget_spent;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGALRM, &action, &previous_);
    itimerval timer{};
    timer.it_value.tv_sec = time_t(seconds);
    timer.it_value.tv_usec = std::max<suseconds_t>(1, suseconds_t((seconds - double(timer.it_value.tv_sec)) * 1e6));
    setitimer(ITIMER_REAL, &timer, nullptr);
    armed_ = true;
  }
  ~BudgetAlarm() {
    if (!armed_) return;
    const itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
    sigaction(SIGALRM, &previous_, nullptr);
  }
  BudgetAlarm(const BudgetAlarm&) = delete;
  BudgetAlarm& operator=(const BudgetAlarm&) = delete;
  bool spent() const { return budget_spent != 0; }

 private:
  struct sigaction previous_ {};
  bool armed_ = false;
};

KernelResult analyze_profile(const std::filesystem::path& csv, const std::filesystem::path& analyses) {
  KernelResult result;
  if (!std::filesystem::exists(csv) || csv::read_file(csv).rows.empty()) return result;
  const std::vector<analyze::Series> series = analyze::read_series_file(csv.string(), analyze::ReadOptions{});
  const analyze::Series& profile = series.front();
  const analyze::SeriesAnalysis analysis =
      analyze::analyze_series(profile, analyze::AnalysisOptions{}, analyze::MWeights());
  result.present = true;
  for (const analyze::SeriesPoint& point : profile.points) result.time_us[point.m] = point.time_us;
  result.failed = int64_t(profile.excluded.size());
  for (const analyze::Finding& finding : analysis.findings) result.flagged_m.push_back(finding.anomaly.m);
  // What `analyze CSV` prints and writes for this profile, kept beside the table.
  analyze::AnalyzeRequest request;
  request.inputs = {csv.string()};
  request.out_dir = analyses;
  std::ostringstream text;
  try {
    analyze::run_analyze(request, text);
  } catch (const UserError& error) {  // what `analyze` would say about this file; the other files still count
    text << "analyze: " << error.what() << "\n";
  }
  write_file_atomically(analyses / (csv.stem().string() + ".txt"), text.str());
  return result;
}

}  // namespace

RunSettings resolve_settings(const SelfCheckOptions& options) {
  if (options.backend != "auto" && options.backend != "cpu" && options.backend != "cuda")
    throw UserError(fmt::format("--backend '{}' is not auto, cpu or cuda", options.backend));
  RunSettings settings;
  profiler::register_all_kernels();
  settings.backend = options.backend == "auto" ? (kernels::cuda_device_count() > 0 ? "cuda" : "cpu") : options.backend;
  const bool gpu = settings.backend == "cuda";
  settings.ours = !options.ours.empty() ? options.ours : gpu ? "fp8_blockscale" : "cpu_fp8_blockscale";
  settings.baseline = !options.baseline.empty() ? options.baseline
                      : gpu                     ? "cublaslt_fp8_blockscale"
                                                : "cpu_a16w8_blockscale";
  if (settings.ours == settings.baseline)
    throw UserError(fmt::format("--ours and --baseline both name {}; give two kernels", settings.ours));
  settings.timing = !options.timing.empty() ? options.timing : gpu ? "graph" : "events";
  kernels::parse_timing_mode(settings.timing);  // an unknown mode stops here
  settings.m_range = options.m_range;
  return settings;
}

RunSettings read_settings(const std::filesystem::path& out) {
  const nlohmann::json j = read_manifest(out);
  try {
    return {j.at("backend"), j.at("ours"), j.at("baseline"), j.at("timing"), j.at("m_range")};
  } catch (const nlohmann::json::exception& error) {
    throw UserError(
        fmt::format("{}: {}; remove it and rerun the self-check", (out / kSettingsFile).string(), error.what()));
  }
}

void check_measured_for(const ShapeList& list, const std::filesystem::path& out) {
  const auto measured = read_manifest(out).at("shapes").get<std::vector<std::string>>();
  if (measured != shape_keys(list))
    throw UserError(
        fmt::format("{} was measured for {} shapes, these options give {}; give the run's --no-catalog, "
                    "--no-named-extras, --shapes and --hf-config",
                    out.string(), measured.size(), list.shapes.size()));
}

SweepOutcome sweep_shapes(const ShapeList& list, const SelfCheckOptions& options, const RunSettings& settings) {
  if (list.shapes.empty()) throw UserError("no shapes to sweep; drop --no-catalog or give --shapes / --hf-config");
  if (std::filesystem::exists(options.out / kSettingsFile)) {
    const RunSettings before = read_settings(options.out);
    if (!(before == settings))
      throw UserError(
          fmt::format("{} was measured with {}; this run asks for {}: use the same options or another --out",
                      options.out.string(), settings_text(before), settings_text(settings)));
  }
  profiler::ProfileRequest request;
  for (const CheckShape& shape : list.shapes) request.shapes.push_back(fmt::format("{},{}", shape.n, shape.k));
  request.kernels = {settings.ours, settings.baseline};
  request.backend = settings.backend;
  request.m_sweep.ranges = {settings.m_range};
  request.timing = settings.timing;
  request.measure.warmup_runs = options.warmup_runs;
  request.measure.min_samples = options.min_samples;
  request.measure.max_samples = options.max_samples;
  request.measure.max_seconds_per_point = options.max_seconds_per_point;
  request.out = raw_dir(options.out).string();
  request.peak_tflops = options.peak_tflops;
  request.threads = options.threads;
  request.warm_up = options.warm_up;
  request.command_line = options.command_line;
  if (options.time_budget_s < 0)
    throw UserError(fmt::format("--time-budget {}: give 0 (none) or more seconds", options.time_budget_s));
  // Every check of `profile` (kernels on this backend, M range, a folder measured by another build) before any work.
  profiler::SweepSetup setup = profiler::prepare_sweep(request);
  write_file_atomically(options.out / kSettingsFile, json_text(settings_json(settings, list), 2));

  const std::vector<int64_t>& m_values = setup.plan.m_values;
  const std::set<int64_t> wanted(m_values.begin(), m_values.end());
  const auto rows_of_shape = [&](const CheckShape& shape) {
    return rows_at(profile_path(options.out, shape, settings.ours, settings), wanted) +
           rows_at(profile_path(options.out, shape, settings.baseline, settings), wanted);
  };
  SweepOutcome outcome;
  const int64_t per_shape = 2 * int64_t(m_values.size());
  outcome.points = per_shape * int64_t(list.shapes.size());
  // The estimate of a shape's points not on disk yet, `kept` of them being there.
  const auto estimate_of_rest = [&](const CheckShape& shape, int64_t kept) {
    return estimated_shape_seconds(shape.n, shape.k, m_values, 2) * double(per_shape - kept) / double(per_shape);
  };
  std::vector<int64_t> done;
  double estimate_left = 0;
  for (const CheckShape& shape : list.shapes) {
    done.push_back(rows_of_shape(shape));
    outcome.points_done += done.back();
    estimate_left += estimate_of_rest(shape, done.back());
  }
  fmt::print(
      stderr,
      "self-check: {} shapes x {} M x 2 kernels = {} points, {} already in {}; {} estimated for the rest on an H100\n",
      list.shapes.size(), m_values.size(), outcome.points, outcome.points_done, raw_dir(options.out).string(),
      duration_text(estimate_left));
  if (outcome.points_done == outcome.points) return outcome;

  const auto device_lock = profiler::hold_sweep_device(*setup.device, profiler::parse_busy_policy("wait"));
  BudgetAlarm budget(options.time_budget_s);
  const auto start = Clock::now();
  const std::shared_ptr<profiler::DeviceBaseline> baseline =
      profiler::measure_device_baseline(*setup.device, setup.plan);
  double measured_seconds = 0, measured_estimate = 0;
  for (std::size_t i = 0; i < list.shapes.size() && !interrupt_requested(); ++i) {
    const CheckShape& shape = list.shapes[i];
    if (done[i] >= per_shape) continue;
    const double shape_estimate = estimate_of_rest(shape, done[i]);
    profiler::SweepPlan plan = setup.plan;
    plan.problems = {setup.plan.problems[i]};
    plan.baseline = baseline;
    const auto shape_start = Clock::now();
    profiler::run_sweep(*setup.device, plan);
    const double seconds = std::chrono::duration<double>(Clock::now() - shape_start).count();
    const int64_t now_done = rows_of_shape(shape);
    const int64_t measured = now_done - done[i];
    outcome.points_done += measured;
    // The ETA scales what is left of the estimate by how this run compares with it so far.
    const double part = measured > 0 ? double(measured) / double(per_shape - done[i]) : 0.0;
    measured_seconds += seconds;
    measured_estimate += shape_estimate * part;
    estimate_left -= shape_estimate * part;
    const double pace = measured_estimate > 0 ? measured_seconds / measured_estimate : 1.0;
    fmt::print(stderr, "[{}/{}] N={} K={}: {} points measured, {} kept, {:.1f} s | {} of {} points ({:.1f}%), ETA {}\n",
               i + 1, list.shapes.size(), shape.n, shape.k, measured, done[i], seconds, outcome.points_done,
               outcome.points, 100.0 * double(outcome.points_done) / double(outcome.points),
               duration_text(estimate_left * pace));
    done[i] = now_done;
  }
  outcome.stopped = outcome.points_done < outcome.points;
  outcome.interrupted = interrupt_requested() && !budget.spent();
  if (budget.spent()) set_interrupt_requested(false);  // the budget's stop is over; the analysis runs in full
  fmt::print(stderr, "self-check: measured for {} (device baseline included)\n",
             duration_text(std::chrono::duration<double>(Clock::now() - start).count()));
  return outcome;
}

std::vector<ShapeRow> analyze_shapes(const ShapeList& list, const std::filesystem::path& out,
                                     const RunSettings& settings) {
  const std::vector<int64_t> m_values =
      profiler::resolve_m_sweep(profiler::MSweepSpec{"", {settings.m_range}, {}, false});
  ensure_writable_directory(analyses_dir(out));
  std::vector<ShapeRow> rows;
  for (const CheckShape& shape : list.shapes) {
    rows.push_back(
        compare_shape(shape, analyze_profile(profile_path(out, shape, settings.ours, settings), analyses_dir(out)),
                      analyze_profile(profile_path(out, shape, settings.baseline, settings), analyses_dir(out)),
                      int64_t(m_values.size())));
  }
  return rows;
}

Totals write_summary(const std::vector<ShapeRow>& rows, const ShapeList& list, const std::filesystem::path& out,
                     const RunSettings& settings) {
  const Totals totals = total(rows);
  const KernelNames names{settings.ours, settings.baseline};
  write_file_atomically(out / "summary.md", summary_markdown(rows, totals, names, list));
  write_file_atomically(out / "summary.csv", summary_csv(rows));
  return totals;
}

}  // namespace shapescope::self_check
