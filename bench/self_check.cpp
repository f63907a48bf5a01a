// self_check: our fp8_blockscale against cuBLASLt block-scaled over every distinct (N, K) the catalog's FP8
// block-scaled models run at TP 1/2/4/8 (plus shapes of models outside it), M 16..4096 step 16, graph timing;
// `analyze` on every profile; a table of flagged M side by side and the targets, met or missed.
// Resumable: a rerun keeps every point in --out and measures the rest (docs/self_check.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "bench/bench_main.hpp"
#include "bench/self_check/self_check_estimate.hpp"
#include "bench/self_check/self_check_run.hpp"
#include "common/cli_errors.hpp"
#include "common/interrupt.hpp"
#include "common/model_catalog.hpp"
#include "common/user_error.hpp"
#include "profiler/m_sweep.hpp"

namespace {

using namespace shapescope;
using namespace shapescope::self_check;

constexpr int kExitInterrupted = 130;

// A --hf-config file's model name: its file name, or its folder's for a file named config.json.
std::string hf_model_name(const std::filesystem::path& path) {
  const std::string stem = path.stem().string();
  if (stem != "config") return stem;
  const std::string folder = std::filesystem::absolute(path).parent_path().filename().string();
  return folder.empty() ? stem : folder;
}

ShapeList shape_list(bool catalog, bool named_extras, const std::vector<std::string>& raw_shapes,
                     const std::vector<std::string>& hf_configs) {
  ShapeList list;
  if (catalog) add_model_shapes(list, ModelCatalog::load_default(), true);
  if (named_extras) add_named_extras(list);
  for (const std::string& text : raw_shapes) add_raw_shapes(list, text);
  for (const std::string& path : hf_configs) {
    ModelCatalog outside;
    outside.add(model_from_hf_config(path, hf_model_name(path)));
    add_model_shapes(list, outside, false);
  }
  return list;
}

std::string plan_text(const ShapeList& list, const std::string& m_range) {
  const std::vector<int64_t> m_values = profiler::resolve_m_sweep(profiler::MSweepSpec{"", {m_range}, {}, false});
  double seconds = kEstimatedBaselineSeconds;
  for (const CheckShape& shape : list.shapes) seconds += estimated_shape_seconds(shape.n, shape.k, m_values, 2);
  std::string text = shape_list_text(list);
  int64_t catalog = 0;
  for (const CheckShape& shape : list.shapes) catalog += shape.in_catalog();
  text += fmt::format(
      "\n{} distinct shapes ({} from the catalog), {} M each, 2 kernels: {} points; about {:.0f} s "
      "({:.1f} min) on an H100 with graph timing\n",
      list.shapes.size(), catalog, m_values.size(), 2 * m_values.size() * list.shapes.size(), seconds, seconds / 60);
  return text;
}

int run(int argc, char** argv) {
  install_interrupt_handlers();
  SelfCheckOptions options;
  for (int i = 0; i < argc; ++i) options.command_line += (i ? " " : "") + std::string(argv[i]);
  std::vector<std::string> raw_shapes, hf_configs;
  bool no_catalog = false, no_named_extras = false, list_shapes = false, summarize_only = false, no_warm_up = false;
  CLI::App app{"self_check: our FP8 block-scaled GEMM against cuBLASLt's over every catalog shape, analyzed"};
  app.add_option("--out", options.out, "output folder; a rerun resumes from it")->capture_default_str();
  app.add_option("--backend", options.backend, "auto | cpu | cuda")->capture_default_str();
  app.add_option("--ours", options.ours, "the kernel checked (default: fp8_blockscale; CPU: cpu_fp8_blockscale)");
  app.add_option("--baseline", options.baseline,
                 "the kernel it is compared with (default: cublaslt_fp8_blockscale; CPU: cpu_a16w8_blockscale)");
  app.add_option("--m-range", options.m_range, "START:STOP:STEP, STOP inclusive")->capture_default_str();
  app.add_option("--timing", options.timing, "graph | events | kernel (default: graph on a GPU, events on the CPU)");
  app.add_option("--warmup", options.warmup_runs)->capture_default_str();
  app.add_option("--min-samples", options.min_samples)->capture_default_str();
  app.add_option("--max-samples", options.max_samples)->capture_default_str();
  app.add_option("--max-seconds-per-point", options.max_seconds_per_point)->capture_default_str();
  app.add_option("--time-budget", options.time_budget_s,
                 "stop measuring after this many seconds, keep what is measured, write the summary (0: none)")
      ->capture_default_str();
  app.add_option("--shapes", raw_shapes, "N,K;N,K: shapes of models outside the catalog (repeatable)");
  app.add_option("--hf-config", hf_configs,
                 "a Hugging Face config.json of a model outside the catalog: its layers at TP 1/2/4/8 (repeatable)");
  app.add_flag("--no-catalog", no_catalog, "leave out the catalog's shapes");
  app.add_flag("--no-named-extras", no_named_extras, "leave out the three named shapes of models outside the catalog");
  app.add_flag("--list-shapes", list_shapes,
               "print the shapes, the layers left out and the time estimate; measure nothing");
  app.add_flag("--summarize-only", summarize_only, "analyze --out's profiles and write the summary; measure nothing");
  app.add_option("--peak-tflops", options.peak_tflops, "MFU peak override in TFLOP/s");
  app.add_option("--threads", options.threads, "CPU threads (0: all cores)")->capture_default_str();
  app.add_flag("--no-warm-up", no_warm_up, "GPU: skip warming up until the SM clock settles");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help
    fmt::print(stderr, "self_check: {} (see self_check --help)\n", one_line(error.what()));
    return kExitUserError;
  }
  options.warm_up = !no_warm_up;
  const ShapeList list = shape_list(!no_catalog, !no_named_extras, raw_shapes, hf_configs);
  if (list_shapes) {
    fmt::print("{}", plan_text(list, options.m_range));
    return 0;
  }
  const RunSettings settings = summarize_only ? read_settings(options.out) : resolve_settings(options);
  if (summarize_only) check_measured_for(list, options.out);
  SweepOutcome outcome;
  if (!summarize_only) outcome = sweep_shapes(list, options, settings);
  const Totals totals = write_summary(analyze_shapes(list, options.out, settings), list, options.out, settings);
  fmt::print("self-check targets ({} against {}):\n{}", settings.ours, settings.baseline, targets_text(totals));
  fmt::print("summary -> {}, {}\n", (options.out / "summary.md").string(), (options.out / "summary.csv").string());
  if (outcome.interrupted) {
    fmt::print(stderr, "self_check: interrupted; measured points are kept, run the same command to resume\n");
    return kExitInterrupted;
  }
  if (outcome.stopped)
    fmt::print("self-check: incomplete, {} of {} points measured (time budget); run the same command to continue\n",
               outcome.points_done, outcome.points);
  else if (!summarize_only)
    fmt::print("self-check: complete, {} points\n", outcome.points);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return shapescope::bench_main("self_check", run, argc, argv);
  } catch (const std::exception& error) {
    return shapescope::report_failure("self_check", error);
  }
}
