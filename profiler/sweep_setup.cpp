#include "profiler/sweep_setup.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <set>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/atomic_file.hpp"
#include "common/model_catalog.hpp"
#include "common/option_checks.hpp"
#include "common/shape_axes.hpp"
#include "common/user_error.hpp"
#include "profiler/format_choice.hpp"
#include "profiler/operand_sizes.hpp"
#include "profiler/resume.hpp"
#include "profiler/stopping_criterion.hpp"

namespace shapescope::profiler {

namespace {

struct ChosenDevice {
  std::unique_ptr<kernels::Device> device;
  std::string reason;
};

// --backend hip: an AMD GPU through the HIP backend, never chosen by auto ahead of CUDA.
ChosenDevice choose_hip_device() {
  if (auto gpu = kernels::make_hip_device()) {
    const std::string name = gpu->info().name;
    return {std::move(gpu), fmt::format("backend hip (asked for: found {})", name)};
  }
  throw UserError(fmt::format("--backend hip: {}; use --backend cpu or auto", kernels::hip_unavailable_reason()));
}

ChosenDevice choose_device(const std::string& backend, int threads) {
  if (backend == "cpu") return {kernels::make_cpu_device(threads), "backend cpu (asked for with --backend cpu)"};
  if (backend == "hip") return choose_hip_device();
  if (backend != "cuda" && backend != "auto") {
    throw UserError(fmt::format("--backend '{}' is not one of auto, cpu, cuda, hip", backend));
  }
  if (auto gpu = kernels::make_cuda_device()) {
    const std::string name = gpu->info().name;
    return {std::move(gpu), fmt::format("backend cuda ({}: found {})", backend == "auto" ? "auto" : "asked for", name)};
  }
  if (backend == "cuda") {
    throw UserError(fmt::format("--backend cuda: {}; use --backend cpu or auto", kernels::cuda_unavailable_reason()));
  }
  if (auto gpu = kernels::make_hip_device()) {
    const std::string name = gpu->info().name;
    return {std::move(gpu), fmt::format("backend hip (auto: no CUDA device, found {})", name)};
  }
  return {kernels::make_cpu_device(threads),
          fmt::format("backend cpu (auto: no CUDA device, {})", kernels::cuda_unavailable_reason())};
}

// Whether a run that names no kernel profiles this one (grouped entries have no opt-out).
bool profiled_by_default(const kernels::KernelEntry& entry) { return entry.profiled_by_default; }
bool profiled_by_default(const kernels::GroupedKernelEntry&) { return true; }

// The block formats of a run's layers.
struct RunFormats {
  std::set<BlockFormatId> layers;
  std::optional<BlockFormatId> forced;  // --operand-format
};

template <class Entry>
std::string formats_text(const Entry& entry) {
  std::vector<std::string_view> names;
  for (const BlockFormatId format : entry.formats_taken) names.push_back(to_string(format));
  return fmt::format("{}", fmt::join(names, ", "));
}

// The requested kernels of one registry (dense or grouped), checked against the run's backend and, under
// --operand-format, that format; when none was requested, the backend's kernels profiled by default that take
// one of the layers' formats, plus the bf16 baseline.
template <class Entry>
std::vector<std::string> kernels_on_backend(const std::vector<Entry>& registry,
                                            const Entry& (*find)(const std::string&),
                                            const std::vector<std::string>& requested, kernels::BackendKind backend,
                                            const RunFormats& formats) {
  std::vector<std::string> available, by_default;
  for (const Entry& entry : registry) {
    if (entry.backend != backend) continue;
    available.push_back(entry.name);
    const bool takes_layers = std::any_of(formats.layers.begin(), formats.layers.end(),
                                          [&](BlockFormatId format) { return takes_format(entry, format); });
    if (profiled_by_default(entry) && (takes_layers || takes_format(entry, BlockFormatId::bf16)))
      by_default.push_back(entry.name);
  }
  if (requested.empty()) return by_default;
  for (const std::string& name : requested) {
    const Entry& entry = find(name);
    if (entry.backend != backend) {
      throw UserError(fmt::format("--kernel {} runs on the {} backend but this run uses {}; pass --backend {} or one of {}",
                                  name, kernels::to_string(entry.backend), kernels::to_string(backend),
                                  kernels::to_string(entry.backend), fmt::join(available, ", ")));
    }
    if (formats.forced && !takes_format(entry, *formats.forced)) {
      throw UserError(fmt::format("--kernel {} cannot take --operand-format {} (it takes {}); drop --operand-format or "
                                  "name a kernel that takes it",
                                  name, to_string(*formats.forced), formats_text(entry)));
    }
  }
  return requested;
}

std::vector<std::string> kernels_for(const std::vector<std::string>& requested, kernels::BackendKind backend,
                                     const RunFormats& formats) {
  return kernels_on_backend(kernels::kernel_registry(), &kernels::find_kernel, requested, backend, formats);
}

// --operand-format NAME, or nothing. Throws UserError naming the formats.
std::optional<BlockFormatId> forced_format(const ProfileRequest& request) {
  if (request.operand_format.empty()) return std::nullopt;
  try {
    return parse_block_format(request.operand_format);
  } catch (const UserError& error) {
    throw UserError(fmt::format("--operand-format: {}", error.what()));
  }
}

// Every layer in --operand-format's format where given; the formats the run's layers are in.
RunFormats apply_formats(std::vector<GemmProblem*> problems, std::optional<BlockFormatId> forced) {
  RunFormats formats;
  formats.forced = forced;
  for (GemmProblem* problem : problems) {
    if (forced) problem->format = *forced;
    formats.layers.insert(problem->format);
  }
  return formats;
}

// A K the format a kernel runs cannot pack (an odd K for FP4): one line before any work.
template <class Entry>
void check_k_packing(const GemmProblem& problem, const Entry& entry) {
  const BlockFormatId format = format_run_by(entry, problem.format);
  const std::string packing = k_packing_problem(block_format(format).weights, problem.k);
  if (packing.empty()) return;
  const std::string where = is_raw_shape(problem) ? fmt::format("--shape {},{}", problem.n, problem.k)
                                                  : fmt::format("{} {} at TP{}", problem.model, problem.module, problem.tp);
  throw UserError(fmt::format("{}: {} runs {} and {}; pick another --operand-format or --tp", where, entry.name,
                              to_string(format), packing));
}

// A dense or grouped kernel entry whose weights carry 128x128 scale blocks.
template <class Entry>
bool block_scaled(const Entry& entry) {
  return entry.formats.find("128x128") != std::string::npos;
}

// --cut-scale-block: whether a split that cuts a scale block is refused; throws UserError unless allow or refuse.
bool refuses_scale_block_cuts(const std::string& policy) {
  if (policy != "allow" && policy != "refuse") {
    throw UserError(fmt::format("--cut-scale-block '{}' is not allow or refuse", policy));
  }
  return policy == "refuse";
}

void check_scale_block_cuts(const SweepPlan& plan, const std::string& policy) {
  if (!refuses_scale_block_cuts(policy)) return;
  for (const GemmProblem& problem : plan.problems) {
    if (!problem.cuts_scale_block) continue;
    for (const std::string& name : plan.kernels) {
      if (!block_scaled(kernels::find_kernel(name))) continue;
      throw UserError(fmt::format(
          "{} {} at TP{} (N={}, K={}) splits a 128x128 weight-scale block, so {} would see a partial block at the "
          "split edge; use expert parallelism (--ep, whole experts per GPU) or a smaller --tp, or pass --cut-scale-block allow "
          "to profile the partial-block shape anyway",
          problem.model, problem.module, problem.tp, problem.n, problem.k, name));
    }
  }
}

std::vector<std::string> grouped_kernels_for(const std::vector<std::string>& requested, kernels::BackendKind backend,
                                             const RunFormats& formats) {
  return kernels_on_backend(kernels::grouped_kernel_registry(), &kernels::find_grouped_kernel, requested, backend,
                            formats);
}

void check_grouped_scale_block_cuts(const GroupedSweepPlan& plan, const std::string& policy) {
  if (!refuses_scale_block_cuts(policy)) return;
  for (const GroupedSeries& series : plan.series) {
    if (!series.problem.cuts_scale_block) continue;
    for (const std::string& name : plan.kernels) {
      if (!block_scaled(kernels::find_grouped_kernel(name))) continue;
      throw UserError(fmt::format(
          "{} {} at TP{} (N={}, K={}) splits an expert's 128x128 weight-scale blocks, so {} would see partial blocks; "
          "use --ep (whole experts per GPU) or pass --cut-scale-block allow",
          series.problem.model, series.problem.module, series.problem.tp, series.problem.n, series.problem.k, name));
    }
  }
}

// --shape names the GEMMs itself: every option that picks or splits a model's layers is refused beside it.
void check_raw_shape_request(const ProfileRequest& request) {
  const GroupedRequest& g = request.grouped;
  const bool model_options = !request.model.empty() || !request.hf_config.empty() || request.module != "all" ||
                             request.tp != 1 || g.ep != 1 || !g.preset.empty() || !g.routing.empty() ||
                             !g.layout.empty() || g.align != 0 || g.max_m != 0;
  if (model_options) {
    throw UserError(
        "--shape N,K[,batch] profiles raw dense GEMMs without a model; drop --model, --module, --tp, --ep, --hf-config "
        "and the grouped options, or drop --shape");
  }
}

ModelCatalog load_catalog(const ProfileRequest& request) {
  if (request.hf_config.empty()) return ModelCatalog::load_default();
  ModelCatalog catalog;
  catalog.add(model_from_hf_config(request.hf_config, request.model));
  return catalog;
}

// --timing, or the M preset's default; kernel timing only where the device can trace kernels.
kernels::TimingMode timing_for(const ProfileRequest& request, const std::string& m_preset, kernels::Device& device) {
  const kernels::TimingMode timing =
      request.timing.empty() ? default_timing(m_preset) : kernels::parse_timing_mode(request.timing);
  if (timing == kernels::TimingMode::kernel) {
    try {
      device.make_kernel_timer();
    } catch (const std::exception& error) {
      throw UserError(fmt::format("--timing kernel cannot run here: {}", error.what()));
    }
  }
  return timing;
}

// What every sweep plan, dense or grouped, takes from the request: measurement, timing (the M preset's
// default unless --timing), PDL, seed, peak, command line, progress, warm-up, and the output folder
// (checked writable).
template <class Plan>
void take_sweep_options(Plan& plan, const ProfileRequest& request, const std::string& m_preset,
                        kernels::Device& device) {
  plan.measure = request.measure;
  plan.measure.timing = timing_for(request, m_preset, device);
  plan.programmatic_launch = programmatic_launch_for(request.pdl, plan.measure.timing);
  plan.seed = request.seed;
  plan.peak_mode = request.peak == "measured" ? PeakMode::measured : PeakMode::datasheet;
  plan.peak_override_tflops = request.peak_tflops;
  plan.command_line = request.command_line;
  plan.progress = request.progress;
  plan.steady_warm_up = request.warm_up;
  plan.m_search = request.m_search;
  plan.out_dir = request.out.empty() ? std::filesystem::path("profiles") / device_slug(device.info().name)
                                     : std::filesystem::path(request.out);
  ensure_writable_directory(plan.out_dir);
}

// --module experts and --grouped-preset: routed rows per expert instead of one GEMM per M.
GroupedSweepPlan prepare_grouped(const ProfileRequest& request, const std::vector<GemmProblem>& problems,
                                 kernels::Device& device) {
  const kernels::BackendKind backend = device.kind();
  GroupedSweepPlan plan;
  MSweepSpec m_sweep = request.m_sweep;
  if (!request.grouped.preset.empty()) {
    if (!m_sweep.preset.empty() || !m_sweep.ranges.empty() || !m_sweep.lists.empty())
      throw UserError("--grouped-preset fixes every group's rows; drop --m-preset, --m-range and --m-list");
    plan = plan_grouped_preset(request.grouped);
  } else {
    if (m_sweep.preset.empty()) m_sweep.preset = backend == kernels::BackendKind::cpu ? "cpu" : "cudagraph";
    plan = plan_grouped_experts(problems, request.grouped, resolve_m_sweep(m_sweep), request.seed);
  }
  std::vector<GemmProblem*> layers;
  for (GroupedSeries& series : plan.series) layers.push_back(&series.problem);
  plan.kernels = grouped_kernels_for(request.kernels, backend, apply_formats(layers, forced_format(request)));
  if (plan.kernels.empty())
    throw UserError(fmt::format("no grouped kernels registered for the {} backend", to_string(backend)));
  for (const GroupedSeries& series : plan.series)
    for (const std::string& name : plan.kernels) check_k_packing(series.problem, kernels::find_grouped_kernel(name));
  check_grouped_scale_block_cuts(plan, request.cut_scale_block);
  take_sweep_options(plan, request, m_sweep.preset, device);
  return plan;
}

}  // namespace

bool programmatic_launch_for(const std::string& pdl, kernels::TimingMode timing) {
  if (pdl == "on") return true;
  if (pdl == "off") return false;
  if (pdl != "auto") throw UserError(fmt::format("--pdl '{}' is not auto, on or off", pdl));
  return timing == kernels::TimingMode::graph;
}

bool parse_on_off(const std::string& option, const std::string& value) {
  if (value == "on") return true;
  if (value == "off") return false;
  throw UserError(fmt::format("{} '{}' is not on or off", option, value));
}

kernels::TimingMode default_timing(const std::string& m_preset) {
  return m_preset == "cudagraph" ? kernels::TimingMode::graph : kernels::TimingMode::events;
}

void check_numeric_options(const ProfileRequest& request) {
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  if (request.threads < 0 || request.threads > cores) {
    throw UserError(fmt::format("--threads {}: give 0 (all {} cores) up to {}", request.threads, cores, cores));
  }
  require_number("--peak-tflops", request.peak_tflops, request.peak_tflops >= 0 && request.peak_tflops <= 1e6,
                 "from 0 (none) to 1e6 TFLOP/s");
  if (request.repeat < 1 || request.repeat > 1000) {
    throw UserError(fmt::format("--repeat {}: give 1 to 1000 passes", request.repeat));
  }
  const MeasureOptions& mo = request.measure;
  if (mo.min_samples < 1 || mo.max_samples < mo.min_samples || mo.warmup_runs < 0) {
    throw UserError(fmt::format("--warmup {}, --min-samples {}, --max-samples {}: give --warmup >= 0 and 1 <= "
                                "--min-samples <= --max-samples",
                                mo.warmup_runs, mo.min_samples, mo.max_samples));
  }
  require_number("--target-rel-stderr", mo.target_rel_stderr, mo.target_rel_stderr > 0 && mo.target_rel_stderr <= 1,
                 "above 0 and at most 1");
  require_number("--max-seconds-per-point", mo.max_seconds_per_point,
                 mo.max_seconds_per_point >= 0 && mo.max_seconds_per_point <= 3600, "from 0 to 3600");
  make_stopping_criterion(mo);  // an unknown criterion or parameter: refused before any work
  check_m_search_options(request.m_search);
  if (request.m_search.mode == MSearch::adaptive && request.repeat > 1)
    throw UserError(fmt::format("--repeat {} with --m-search adaptive: the search measures each M once; drop "
                                "--repeat or use --m-search grid",
                                request.repeat));
}

uint64_t parse_seed(const std::string& text) {
  uint64_t seed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    throw UserError(fmt::format("--seed {}: give a whole number from 0 to {}", text, UINT64_MAX));
  }
  return seed;
}

void register_all_kernels() {
  kernels::register_cpu_kernels();
  kernels::register_cuda_kernels();
  kernels::register_hip_kernels();
}

std::string device_slug(const std::string& device_name) {
  std::string slug;
  for (char c : device_name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      slug += char(std::tolower(static_cast<unsigned char>(c)));
    } else if (!slug.empty() && slug.back() != '_') {
      slug += '_';
    }
  }
  while (!slug.empty() && slug.back() == '_') slug.pop_back();
  return slug.empty() ? "unknown_device" : slug;
}

SweepSetup prepare_sweep(const ProfileRequest& request) {
  register_all_kernels();
  const bool raw_shapes = !request.shapes.empty();
  if (raw_shapes) check_raw_shape_request(request);
  const bool grouped = wants_grouped(request.module, request.grouped);
  const GroupedRequest& g = request.grouped;
  if (!grouped && (!g.routing.empty() || !g.layout.empty() || g.align != 0 || g.max_m != 0)) {
    throw UserError("--routing, --layout, --align and --max-m shape grouped GEMMs; add --module experts");
  }
  if (!g.preset.empty() && !request.model.empty())
    throw UserError("--grouped-preset replaces --model; give one of them");
  if (request.model.empty() && g.preset.empty() && !raw_shapes) {
    throw UserError("--model is required (see --list-models), or give raw shapes with --shape N,K[,batch]");
  }
  check_numeric_options(request);
  forced_format(request);  // an unknown --operand-format stops here, before any work
  if (request.peak != "datasheet" && request.peak != "measured") {
    throw UserError(fmt::format("--peak '{}' is not datasheet or measured", request.peak));
  }

  SweepSetup setup;
  SweepPlan& plan = setup.plan;
  // Shapes and M values first: cheap, and the likeliest typos.
  if (raw_shapes) {
    plan.problems = parse_shapes(request.shapes);
  } else if (g.preset.empty()) {
    const ModelCatalog catalog = load_catalog(request);
    plan.problems = catalog.problems(request.model, request.module, request.tp, g.ep);
  }

  ChosenDevice chosen = choose_device(request.backend, request.threads);
  setup.device = std::move(chosen.device);
  setup.backend_reason = std::move(chosen.reason);
  const kernels::BackendKind backend = setup.device->kind();

  if (grouped) {
    setup.grouped = prepare_grouped(request, plan.problems, *setup.device);
    return setup;
  }

  MSweepSpec m_sweep = request.m_sweep;
  if (m_sweep.preset.empty()) m_sweep.preset = backend == kernels::BackendKind::cpu ? "cpu" : "fairyspeed";
  plan.m_values = resolve_m_sweep(m_sweep);
  check_operand_sizes(plan.problems, plan.m_values.back(), setup.device->info().memory_bytes);
  std::vector<GemmProblem*> layers;
  for (GemmProblem& problem : plan.problems) layers.push_back(&problem);
  plan.kernels = kernels_for(request.kernels, backend, apply_formats(layers, forced_format(request)));
  if (plan.kernels.empty()) throw UserError(fmt::format("no kernels registered for the {} backend", to_string(backend)));
  for (const std::string& name : plan.kernels) {
    const kernels::KernelEntry& entry = kernels::find_kernel(name);
    if (!entry.device_problem) continue;
    if (auto problem = entry.device_problem()) throw UserError(*problem);
  }
  for (const GemmProblem& problem : plan.problems)
    for (const std::string& name : plan.kernels) check_k_packing(problem, kernels::find_kernel(name));
  check_scale_block_cuts(plan, request.cut_scale_block);

  take_sweep_options(plan, request, m_sweep.preset, *setup.device);
  plan.repeat = request.repeat;
  check_resumable(plan, setup.device->info());
  return setup;
}

std::string list_kernels_text() {
  register_all_kernels();
  // Grouped kernels first: plugin kernels join the dense list, which then ends the listing.
  std::string text;
  kernels::GroupedShape grouped_example;
  grouped_example.n = 4096;
  grouped_example.k = 7168;
  grouped_example.rows = {8, 0, 3, 1};
  text += fmt::format("grouped kernels (--module experts; config for the example N={} K={} rows {}):\n",
                      grouped_example.n, grouped_example.k, fmt::join(grouped_example.rows, ","));
  for (const auto& entry : kernels::grouped_kernel_registry()) {
    text += fmt::format("{}  [{}, {}, takes {}]\n  formats: {}\n  {}\n  config: {}\n", entry.name,
                        kernels::to_string(entry.backend), entry.dtype, formats_text(entry), entry.formats,
                        entry.description, entry.describe_config ? entry.describe_config(grouped_example) : "-");
  }
  if (const std::string missing = kernels::missing_grouped_kernels(); !missing.empty()) text += missing + "\n";
  const kernels::GemmShape example{256, 14336, 4096, 1};
  text += fmt::format("kernels (config for the example M={} N={} K={}):\n", example.m, example.n, example.k);
  for (const auto& entry : kernels::kernel_registry()) {
    text += fmt::format("{}  [{}, {}, takes {}]\n  formats: {}\n  {}\n  config: {}\n", entry.name,
                        kernels::to_string(entry.backend), entry.dtype, formats_text(entry), entry.formats,
                        entry.description, entry.describe_config ? entry.describe_config(example) : "-");
  }
  return text;
}

std::string list_models_text() {
  const ModelCatalog catalog = ModelCatalog::load_default();
  std::string text;
  for (const ModelSpec& model : catalog.models()) {
    text += model.name + "\n";
    for (const LinearLayer& layer : model.layers) {
      text += fmt::format("  {:<26} K={:<6} N={:<6} {} {}", layer.name, layer.k, layer.n, to_string(layer.tp_rule),
                          to_string(layer.format));
      if (layer.batch_count > 1) text += fmt::format(" batch={}", layer.batch_count);
      if (layer.experts > 0) {
        text += fmt::format(" experts={} top_k={} width={}", layer.experts, layer.top_k, layer.expert_width);
        if (layer.shared_experts > 0) text += fmt::format(" shared={}", layer.shared_experts);
      }
      text += "\n";
    }
  }
  return text;
}

}  // namespace shapescope::profiler
