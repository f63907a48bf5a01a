// `profile`: parse the command line, build a SweepPlan, run it, print the summary.
// (main() is profile_executable.cpp; the Python entry point calls profile_cli through libshapescope_c.)
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/cli_errors.hpp"
#include "common/cli_option_rules.hpp"
#include "common/interrupt.hpp"
#include "common/user_error.hpp"
#include "kernels/plugin_kernels.hpp"
#include "profiler/aiter_export.hpp"
#include "profiler/counter_pass.hpp"
#include "profiler/grouped_sweep.hpp"
#include "profiler/profile_cli.hpp"
#include "profiler/replay.hpp"
#include "profiler/scale_out.hpp"
#include "profiler/stopping_criterion.hpp"
#include "profiler/summary_table.hpp"
#include "profiler/sweep_setup.hpp"
#include "profiler/verify_capture_sizes.hpp"
#include "profiler/verify_plans.hpp"

namespace {

constexpr int kExitInterrupted = 130;

std::string joined_command_line(int argc, char** argv) {
  std::string text;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool plain = arg.find_first_of(" \t'\"\\$") == std::string::npos && !arg.empty();
    text += (i ? " " : "") + (plain ? arg : "'" + arg + "'");
  }
  return text;
}

}  // namespace

int shapescope::profiler::profile_cli(int argc, char** argv) {
  using namespace shapescope;
  install_interrupt_handlers();  // first: a signal during setup must not kill the process half-way
  profiler::ProfileRequest request;
  request.command_line = joined_command_line(argc, argv);
  bool list_kernels = false, list_models = false;
  profiler::VerifyRequest verify;
  std::vector<std::string> plugins;

  CLI::App app{"shapescope profile: sweep M over a model layer's GEMM shapes and write one MFU CSV per (kernel, shape)"};
  app.add_option("--model", request.model, "model from the catalog (see --list-models), or the name for --hf-config");
  app.add_option("--module", request.module, "linear layer name, or all")->capture_default_str();
  app.add_option("--tp", request.tp, "tensor-parallel degree")->capture_default_str();
  app.add_option("--shape", request.shapes,
                 "N,K[,batch]: a raw GEMM C[M,N] = A[M,K] B[N,K]^T to sweep instead of a model's layers (repeatable)");
  app.add_option("--ep", request.grouped.ep,
                 "expert-parallel degree: experts/EP whole experts per GPU for the routed expert layers")
      ->capture_default_str();
  app.add_option("--routing", request.grouped.routing,
                 "--module experts: uniform | balanced | lognormal:SIGMA | zipf:S | file:CSV (default uniform)");
  app.add_option("--layout", request.grouped.layout, "--module experts: contiguous | masked (default contiguous)");
  app.add_option("--align", request.grouped.align,
                 "--module experts: contiguous groups start at multiples of this (default 128); masked slots round to it");
  app.add_option("--max-m", request.grouped.max_m, "--layout masked: rows per expert slot (default: the largest group)");
  app.add_option("--grouped-preset", request.grouped.preset,
                 "fixed grouped problems instead of a model: nvfp4_targets");
  app.add_option("--operand-format", request.operand_format,
                 "block format of every layer's operands, replacing the layers' own (what-if sweeps): "
                 "fp8_blockscale | mxfp8 | mxfp4 | nvfp4 | e2m1_e8m0_16 | bf16");
  app.add_option("--kernel", request.kernels, "kernel to profile (repeatable; default: every kernel of the backend)");
  app.add_option("--plugin", plugins,
                 "shared library of kernels built against include/shapescope_plugin.h (repeatable; docs/plugin_abi.md)");
  app.add_flag("--list-kernels", list_kernels, "list kernels with their formats and heuristic configs");
  app.add_flag("--list-models", list_models, "list the model catalog");
  app.add_option("--backend", request.backend, "auto | cpu | cuda | hip")->capture_default_str();
  app.add_option("--m-preset", request.m_sweep.preset, "fairyspeed | cudagraph | large | cpu (default: GPU fairyspeed, cpu cpu)");
  app.add_option("--m-range", request.m_sweep.ranges, "START:STOP:STEP, STOP inclusive (repeatable)");
  app.add_option("--m-list", request.m_sweep.lists, "comma-separated M values (repeatable)");
  std::string m_search = profiler::to_string(profiler::kDefaultMSearch);
  app.add_option("--m-search", m_search,
                 "grid (every M) | adaptive (a coarse pass, then refinement where MFU drops, the kernel changes or "
                 "a point leaves its neighbours' trend; docs/adaptive_search.md)")
      ->capture_default_str();
  app.add_option("--max-points", request.m_search.max_points, "--m-search adaptive: at most this many M per file (0: no cap)");
  app.add_option("--time-budget", request.m_search.time_budget_s,
                 "--m-search adaptive: stop refining a file after this many seconds (0: none)");
  std::string replay;
  app.add_option("--replay", replay,
                 "answer each M from a recorded profile (shapescope or study CSV) instead of a device; writes "
                 "--out (default replay/)/<its name>");
  app.add_flag("--allow-large-sweep", request.m_sweep.allow_large,
               "allow more than 100,000 M values (up to 100,000,000)");
  app.add_option("--warmup", request.measure.warmup_runs, "untimed runs of each operand set before a point is timed (the correctness check's run counts)")->capture_default_str();
  app.add_option("--min-samples", request.measure.min_samples)->capture_default_str();
  app.add_option("--max-samples", request.measure.max_samples)->capture_default_str();
  app.add_option("--target-rel-stderr", request.measure.target_rel_stderr,
                 "stop sampling once stderr(mean)/mean is below this")->capture_default_str();
  app.add_option("--max-seconds-per-point", request.measure.max_seconds_per_point)->capture_default_str();
  std::vector<std::string> criterion_names;
  for (const profiler::StoppingCriterionEntry& entry : profiler::stopping_criteria()) criterion_names.push_back(entry.name);
  app.add_option("--stopping-criterion", request.measure.stopping_criterion,
                 fmt::format("when a point has enough samples: {} (profiler/stopping_criterion.hpp)",
                             fmt::join(criterion_names, " | ")))
      ->capture_default_str();
  std::vector<std::string> criterion_params;
  app.add_option("--criterion-param", criterion_params, "KEY=VALUE: a parameter of the stopping criterion (repeatable)");
  app.add_flag("--hot", request.measure.hot, "keep operands in cache (default: flush before every sample)");
  app.add_option("--timing", request.timing,
                 "events (one cold launch, event to event) | graph (CUDA graph over rotating operand sets, per "
                 "launch) | kernel (CUPTI kernel durations); default: graph for --m-preset cudagraph, else events");
  app.add_option("--pdl", request.pdl,
                 "auto | on | off: our kernels' programmatic dependent launch (auto: on with graph timing)")
      ->capture_default_str();
  app.add_option("--out", request.out, "output folder (default: profiles/<device>/)");
  std::string output_format = "shapescope";
  app.add_option("--format", output_format,
                 "shapescope | aiter: aiter also writes AITER's tuned-GEMM CSV columns, one table per kernel "
                 "(<out>/<kernel>.aiter_tuned_gemm.csv)")
      ->capture_default_str();
  app.add_option("--peak-tflops", request.peak_tflops, "MFU peak override in TFLOP/s");
  app.add_option("--peak", request.peak, "datasheet | measured (CPU: always a measured sgemm)")->capture_default_str();
  app.add_option("--threads", request.threads, "CPU threads (0: all cores)")->capture_default_str();
  std::string seed = std::to_string(request.seed);
  app.add_option("--seed", seed, "operand seed, 0 to 2^64-1")->capture_default_str();
  app.add_option("--hf-config", request.hf_config, "derive shapes from a Hugging Face config.json named by --model");
  app.add_option("--cut-scale-block", request.cut_scale_block,
                 "refuse | allow a TP split that cuts a 128x128 scale block")->capture_default_str();
  app.add_flag("--progress", request.progress, "draw the progress bar even when stderr is not a terminal");
  app.add_option("--repeat", request.repeat,
                 "passes over the M list, each shuffled; rows keep the median and spread over passes")
      ->capture_default_str();
  bool counters = false;
  app.add_flag("--counters", counters,
               "after timing, collect hardware counters (CUPTI) of one launch per M into <csv>.counters.csv, "
               "for analyze --explain-with-counters");
  bool no_warm_up = false;
  app.add_flag("--no-warm-up", no_warm_up, "GPU: skip warming up until the SM clock settles before the sweep");
  app.add_flag("--power-accounting", request.measure.power_accounting,
               "GPU: read the driver's power-cap time counter around each point into power_capped_pct and "
               "power_limit_w (NVML: 0.4-0.7 ms a reading on an H100)");
  std::string clock_probes = "on";
  app.add_option("--clock-probes", clock_probes,
                 "on | off: GPU: measure the SM clock on the device between a point's samples (a 12 us kernel on an H100 "
                 "per ms of samples) into sm_clock_sampled_min_mhz and sm_clock_sampled_mean_mhz")
      ->capture_default_str();
  std::string blocking_kernel = "off";
  app.add_option("--blocking-kernel", blocking_kernel,
                 "on | off: GPU, cold events timing: hold the stream with a kernel while a batch of samples is "
                 "enqueued, then run them back to back, so the host's enqueue of a run is never timed (nvbench's "
                 "blocking kernel; pays on decode-sized runs, costs precision on long ones: docs/timing.md)")
      ->capture_default_str();
  app.add_option("--verify-plans", verify.report_path,
                 "run the split plans of analyze's JSON report on the GPU (serial and two streams) instead of a sweep");
  app.add_option("--verify-out", verify.out_path, "where --verify-plans writes its results (default: REPORT.verify.json)");
  app.add_option("--verify-max-plans", verify.max_plans_per_series,
                 "plans verified per series, largest predicted gain first")->capture_default_str();
  profiler::VerifyCaptureRequest verify_capture;
  app.add_option("--verify-capture-sizes", verify_capture.report_path,
                 "replay the model's GEMM step at every captured size of analyze --capture-sizes' JSON under the "
                 "default and the recommended list (graph timing) instead of a sweep");
  app.add_option("--verify-baseline", verify_capture.baseline,
                 "--verify-capture-sizes: the list the saving is measured against")->capture_default_str();
  app.add_option("--verify-candidate", verify_capture.candidate,
                 "--verify-capture-sizes: the list checked (default: the report's recommended one)");

  profiler::ScaleOutRequest scale_out;
  app.add_option("--shard", scale_out.shard,
                 "I/N: measure shard I of N (0-based) into OUT/shard-I-of-N/; auto: I and N from mpirun/srun/Slurm arrays");
  app.add_option("--merge", scale_out.merge, "merge a folder of shards into one profile per file; lists missing points");
  app.add_option("--gpus", scale_out.gpus, "all | 0,1,...: one worker process per GPU, shards merged into --out");
  app.add_option("--workers", scale_out.workers, "CPU worker processes (--backend cpu), shards merged into --out");
  app.add_option("--device-busy", scale_out.device_busy, "wait | stop when another sweep measures the GPU")
      ->capture_default_str();
  app.add_option("--worker-slot", scale_out.worker_slot)->group("");  // set by --gpus/--workers for their workers
  app.add_option("--worker-count", scale_out.worker_count)->group("");
  // 0 is how these say "not given": given, it must be a count.
  for (const char* name : {"--workers", "--align", "--max-m", "--verify-max-plans"})
    app.get_option(name)->check(positive_count());
  // A preset is a list of M values of its own: beside --m-list or --m-range it would be silently dropped.
  app.get_option("--m-preset")->excludes("--m-list")->excludes("--m-range");
  // --merge reads finished shards: an option of a sweep beside it would be silently ignored.
  CLI::Option* merge = app.get_option("--merge");
  for (CLI::Option* option : app.get_options())
    if (option != merge && option->get_name() != "--help" && option->get_name() != "--progress" && !option->get_group().empty())
      merge->excludes(option);
  refuse_empty_values(app);
  const OptionListing listing(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help
    fmt::print(stderr, "profile: {} (see profile --help)\n", one_line(error.what()));
    return kExitUserError;
  }
  if (listing.listing()) {
    fmt::print("{}", OptionListing::text(app));
    return 0;
  }

  try {
    request.seed = profiler::parse_seed(seed);
    request.m_search.mode = profiler::parse_m_search(m_search);
    request.measure.clock_probes = profiler::parse_on_off("--clock-probes", clock_probes);
    request.measure.blocking_kernel = profiler::parse_on_off("--blocking-kernel", blocking_kernel);
    for (const std::string& param : criterion_params) profiler::parse_criterion_param(param, request.measure.criterion_params);
    if (!replay.empty()) return profiler::replay_cli(replay, request);
    for (const std::string& plugin : plugins) kernels::load_plugin(plugin);
    if (list_kernels || list_models) {
      if (list_kernels) fmt::print("{}", profiler::list_kernels_text());
      if (list_models) fmt::print("{}", profiler::list_models_text());
      return 0;
    }
    if (!verify_capture.report_path.empty()) {
      if (!verify.report_path.empty()) throw UserError("--verify-plans and --verify-capture-sizes: give one of them");
      return profiler::verify_capture_cli(verify_capture, request, verify.out_path,
                                          profiler::parse_busy_policy(scale_out.device_busy), !no_warm_up);
    }
    if (!verify.report_path.empty()) {
      profiler::check_numeric_options(request);
      if (verify.max_plans_per_series < 1) {
        throw UserError(fmt::format("--verify-max-plans {}: give 1 or more", verify.max_plans_per_series));
      }
      profiler::register_all_kernels();
      const auto device = kernels::make_cuda_device();
      if (!device) throw UserError("--verify-plans needs a GPU: " + kernels::cuda_unavailable_reason());
      verify.measure = request.measure;
      verify.seed = request.seed;
      const VerifyResults results = profiler::verify_plans(*device, verify);
      fmt::print("verify-plans: {} plans on {}: {} confirmed, {} weaker, {} refuted -> {}\n", results.plans.size(),
                 results.device, results.count("confirmed"), results.count("weaker"), results.count("refuted"),
                 results.source);
      return 0;
    }
    request.progress = request.progress || isatty(STDERR_FILENO);
    request.warm_up = !no_warm_up;
    if (output_format != "shapescope" && output_format != "aiter")
      throw UserError(fmt::format("--format '{}' is not shapescope or aiter", output_format));
    const bool scaled_out = !scale_out.shard.empty() || !scale_out.merge.empty() || !scale_out.gpus.empty() ||
                            scale_out.workers > 0 || scale_out.worker_slot >= 0;
    if (output_format == "aiter" && scaled_out)
      throw UserError("--format aiter is written by a single-process run; drop --shard/--merge/--gpus/--workers, "
                      "or --format");
    if (request.m_search.mode == profiler::MSearch::adaptive && (scaled_out || counters))
      throw UserError("--m-search adaptive runs in one process and measures no counters; drop "
                      "--shard/--merge/--gpus/--workers/--counters, or use --m-search grid");
    if (const auto code = profiler::run_scale_out(scale_out, request, std::vector<std::string>(argv, argv + argc))) {
      return *code;
    }
    profiler::SweepSetup setup = profiler::prepare_sweep(request);
    const auto device_lock = profiler::hold_sweep_device(*setup.device, profiler::parse_busy_policy(scale_out.device_busy));
    if (interrupt_requested()) {
      fmt::print(stderr, "profile: interrupted during setup; nothing was measured\n");
      return kExitInterrupted;
    }
    if (output_format == "aiter" && setup.grouped)
      throw UserError("--format aiter writes dense GEMM tables; drop --module experts / --grouped-preset, or --format");
    if (counters && setup.grouped) {
      throw UserError("--counters measures dense sweeps; drop --module experts / --grouped-preset, or --counters");
    }
    // Before any work: a device without usable counters says so in one line.
    const auto counter_session = counters ? profiler::open_counters(*setup.device) : nullptr;
    if (setup.grouped) {
      fmt::print(stderr, "profile: {}; {} grouped problem(s) x {} kernel(s), {} -> {}\n", setup.backend_reason,
                 setup.grouped->series.size(), setup.grouped->kernels.size(),
                 setup.grouped->series.empty() ? std::string("-") : setup.grouped->series.front().routing,
                 setup.grouped->out_dir.string());
    } else {
      fmt::print(stderr, "profile: {}; {} M values x {} kernel(s) x {} shape(s) -> {}\n", setup.backend_reason,
                 setup.plan.m_values.size(), setup.plan.kernels.size(), setup.plan.problems.size(),
                 setup.plan.out_dir.string());
    }
    const profiler::SweepResult result = setup.grouped ? profiler::run_grouped_sweep(*setup.device, *setup.grouped)
                                                       : profiler::run_sweep(*setup.device, setup.plan);
    fmt::print("{}", profiler::summary_table(result));
    if (setup.grouped) fmt::print("{}", profiler::speed_of_light_summary(result));
    if (counter_session && !result.interrupted) {
      for (const auto& path : profiler::run_counter_pass(*setup.device, *counter_session, setup.plan))
        fmt::print("counters -> {}\n", path.string());
    }
    if (output_format == "aiter" && !result.interrupted) {
      std::vector<std::filesystem::path> profiles;
      for (const auto& file : result.files) profiles.push_back(file.csv);
      for (const auto& path : profiler::write_aiter_tables(profiles, setup.device->info(), setup.plan.out_dir))
        fmt::print("aiter -> {}\n", path.string());
    }
    if (result.interrupted) {
      fmt::print(stderr, "profile: interrupted; measured points are saved, run the same command to resume\n");
      return kExitInterrupted;
    }
    return 0;
  } catch (const std::exception& error) {
    return report_failure("profile", error);
  }
}
