// `analyze`: flags MFU regressions over M and searches split-GEMM plans.
// Parses the command line into an AnalyzeRequest; everything else is library.
#include <cstdio>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include "analyze/analyze_command.hpp"
#include "analyze/capture_command.hpp"
#include "analyze/triage_command.hpp"
#include "common/cli_errors.hpp"
#include "common/cli_option_rules.hpp"
#include "common/user_error.hpp"

int main(int argc, char** argv) {
  using namespace shapescope::analyze;
  AnalyzeRequest request;
  CLI::App app{"shapescope analyze: MFU regressions over M, split-GEMM plans, kernel comparison"};
  app.add_option("profiles", request.inputs, "profile CSVs: shapescope, the study's, or AITER tuned tables");
  app.add_flag("--check-split-gemm", request.analysis.check_split,
               "search plans for each anomaly: the study's pair, halves, k-way, pad-up");
  std::string rule = to_string(request.analysis.rule);
  app.add_option("--rule", rule,
                 "anomaly rule: noise-aware (robust local reference, shortfall beyond noise; "
                 "docs/anomaly_rules.md) or study (the published low-utils rule, bit-exact)")
      ->capture_default_str();
  app.add_option("--utils-ratio", request.analysis.rule_options.utils_ratio,
                 "anomaly when MFU < ratio x the best MFU of smaller M")
      ->capture_default_str();
  app.add_option("--split-ratio", request.analysis.split.split_ratio,
                 "a plan counts when its predicted time < ratio x the measured time")
      ->capture_default_str();
  app.add_option("--max-parts", request.analysis.split.max_parts, "most launches in a k-way plan")
      ->capture_default_str();
  app.add_option("--launch-overhead-us", request.analysis.split.launch_overhead_us,
                 "added per launch after the first (host gap between back-to-back launches)")
      ->capture_default_str();
  const std::map<std::string, Dedup> dedup_names = {
      {"first", Dedup::first}, {"fastest", Dedup::fastest}, {"median", Dedup::median}};
  app.add_option("--dedup", request.read.dedup, "which row of a repeated M to keep")
      ->transform(CLI::CheckedTransformer(dedup_names))
      ->option_text("first|fastest|median (default fastest)");
  app.add_option("--peak-tflops", request.read.peak_tflops_override,
                 "peak TFLOP/s for MFU (needed for AITER tables of devices not in the peak table)");
  app.add_option("--m-weights", request.m_weights_path,
                 "CSV m,weight: weight recoverable time by traffic; with --capture-sizes also uniform:B, "
                 "geometric:R or zipf:S");
  app.add_option("--top", request.top_n, "rows in the worst-drop and worst-slowdown lists")->capture_default_str();
  app.add_option("--compare", request.compare, "A.csv B.csv: speedup of B over A on the points both hold")
      ->expected(2);
  app.add_flag("--allow-mixed-timing", request.compare_options.allow_mixed_timing,
               "compare: accept profiles timed in different modes (events, graph, kernel)");
  app.add_option("--tie-band", request.compare_options.tie_band,
                 "compare: |speedup - 1| within this is a tie when rows carry no spread")
      ->capture_default_str();
  app.add_option("--json", request.json_path, "write the full report as JSON here");
  app.add_option("--out-dir", request.out_dir, "folder for low_utils_<name>.csv and split_gemm_<name>.csv")
      ->capture_default_str();
  TriageRequest triage;
  app.add_option("--stability", triage.stability,
                 "repeated sweeps A.csv B.csv ...: flagged sets side by side, Jaccard, anomalies in every run "
                 "(a file with a 'pass' column counts as one run per pass)");
  app.add_option("--passes", triage.passes,
                 "passes of one sweep judged together: A.csv B.csv, a file with a 'pass' column, or a profile "
                 "--repeat file; flags where the drop holds across passes, with each pass's reading");
  app.add_option("--plot", triage.plot_path, "write MFU over M as SVG: a line per profile, anomalies, best plans");
  app.add_flag("--log-m", triage.log_m, "plot M on a log scale");
  app.add_option("--report", triage.report_path, "write the triage report: out.html (self-contained) or out.md");
  app.add_option("--dispatch", triage.dispatch_path,
                 "write the best kernel/split/pad per M as JSON (docs/dispatch_schema.md)");
  app.add_option("--explain", triage.explain_top,
                 "anomalies per profile (worst drops first) printed with their causes; 0: none")
      ->capture_default_str();
  app.add_flag("--explain-with-counters", request.explain_with_counters,
               "explain anomalies with the hardware counters profile --counters wrote beside each profile "
               "(<csv>.counters.csv): extra kernels, DRAM traffic, idle SMs, occupancy");
  app.add_option("--verify-results", triage.verify_results_path,
                 "profile --verify-plans output to show in the report")
      ->check(CLI::ExistingFile);

  CaptureRequest capture;
  app.add_flag("--capture-sizes", capture.enabled,
               "recommend CUDA-graph capture sizes from a model's profiles (every module at one TP) for the "
               "--m-weights batch distribution, against vLLM's default list");
  app.add_option("--max-graphs", capture.options.max_graphs, "capture sizes: the most graphs the engine may capture");
  app.add_option("--max-batch", capture.options.max_batch,
                 "capture sizes: the engine's largest batch (default: the distribution's largest)");
  app.add_option("--hf-config", capture.hf_config,
                 "capture sizes: the model's layers from a Hugging Face config.json instead of the catalog")
      ->check(CLI::ExistingFile);
  app.add_option("--exclude-module", capture.exclude_modules,
                 "capture sizes: leave a module out of the step (e.g. kv_b_proj under absorbed-MLA decode); "
                 "repeatable");
  app.add_option("--capture-replay", capture.replay_path,
                 "capture sizes: show what profile --verify-capture-sizes measured for this recommendation")
      ->check(CLI::ExistingFile);

  shapescope::refuse_empty_values(app);
  const shapescope::OptionListing listing(app);

  try {
    app.parse(argc, argv);
    if (listing.listing()) {
      std::cout << shapescope::OptionListing::text(app);
      return 0;
    }
    if (capture.enabled) {
      if (!request.compare.empty() || !triage.stability.empty() || !triage.passes.empty() || !triage.plot_path.empty() ||
          !triage.dispatch_path.empty() || !triage.verify_results_path.empty() || request.analysis.check_split) {
        throw shapescope::UserError("--capture-sizes runs on its own; drop --compare, --stability, --passes, --plot, "
                                    "--dispatch, --verify-results and --check-split-gemm");
      }
      capture.report_path = triage.report_path;
      return run_capture_sizes(request, capture, std::cout);
    }
    if (capture.options.max_graphs || capture.options.max_batch || !capture.hf_config.empty() ||
        !capture.exclude_modules.empty() || !capture.replay_path.empty()) {
      throw shapescope::UserError("--max-graphs, --max-batch, --hf-config, --exclude-module and --capture-replay "
                                  "apply to --capture-sizes; add it or drop them");
    }
    request.analysis.rule = parse_anomaly_rule(rule);
    check_before_work(request, triage);
    // --stability and --passes need no other profile: their runs are the input.
    const bool runs_only = request.inputs.empty() && request.compare.empty() &&
                           (!triage.stability.empty() || !triage.passes.empty());
    int code = runs_only ? 0 : run_analyze(request, std::cout);
    if (code == 0 && triage.any(request)) code = run_triage(request, triage, std::cout);
    return code;
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help
    std::fprintf(stderr, "analyze: %s (see analyze --help)\n", shapescope::one_line(error.what()).c_str());
    return shapescope::kExitUserError;
  } catch (const std::exception& error) {
    return shapescope::report_failure("analyze", error);
  }
}
