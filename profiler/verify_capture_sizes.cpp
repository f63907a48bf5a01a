#include "profiler/verify_capture_sizes.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/interrupt.hpp"
#include "common/json_text.hpp"
#include "common/user_error.hpp"
#include "kernels/synthetic_operands.hpp"
#include "profiler/operand_sets.hpp"
#include "profiler/repeat_sweep.hpp"
#include "profiler/scale_out.hpp"
#include "profiler/session_pool.hpp"
#include "profiler/verify_plans.hpp"

namespace shapescope::profiler {

namespace {

constexpr int kExitInterrupted = 130;

const kernels::KernelEntry* registered(const std::string& name) {
  const auto& registry = kernels::kernel_registry();
  const auto found = std::find_if(registry.begin(), registry.end(),
                                  [&](const kernels::KernelEntry& entry) { return entry.name == name; });
  return found == registry.end() ? nullptr : &*found;
}

void check_dense(const CaptureReportFile& report) {
  for (const CaptureReportModule& module : report.modules) {
    if (module.cost_model == "dense") continue;
    throw UserError(fmt::format("{}: module {} is costed as {}, but the replay runs one dense GEMM per layer; rerun "
                                "analyze --capture-sizes with --exclude-module {} and replay that report",
                                report.path, module.module, module.cost_model, module.module));
  }
}

// The kernels the sizes run, each checked against this binary and the shapes it gets.
std::vector<std::string> check_kernels(const CaptureReportFile& report, const std::vector<int64_t>& sizes,
                                       kernels::BackendKind& backend) {
  std::vector<std::string> names;
  const kernels::KernelEntry* first = nullptr;
  for (const int64_t size : sizes) {
    if (!report.step_us.contains(size)) {
      throw UserError(fmt::format("{}: a list captures M={}, but the grid gives no T({}); pass the JSON analyze "
                                  "--capture-sizes --json wrote",
                                  report.path, size, size));
    }
    for (const CaptureReportModule& module : report.modules) {
      const auto at = module.kernel_at.find(size);
      if (at == module.kernel_at.end()) {
        throw UserError(fmt::format("{}: module {} names no kernel at M={}; pass the JSON analyze --capture-sizes "
                                    "--json wrote",
                                    report.path, module.module, size));
      }
      const kernels::KernelEntry* entry = registered(at->second);
      if (!entry) {
        throw UserError(fmt::format("{}: kernel '{}' ({} at M={}) is not in this binary; build with its backend "
                                    "(CUDA kernels need nvcc) or load it with --plugin",
                                    report.path, at->second, module.module, size));
      }
      if (first && entry->backend != first->backend) {
        throw UserError(fmt::format("{}: kernels of two backends ({} is {}, {} is {}); one replay runs on one device",
                                    report.path, first->name, kernels::to_string(first->backend), entry->name,
                                    kernels::to_string(entry->backend)));
      }
      if (!first) first = entry;
      const kernels::GemmShape shape{size, module.n, module.k, module.batch_count};
      if (entry->unsupported_reason) {
        if (const auto why = entry->unsupported_reason(shape)) {
          throw UserError(fmt::format("{}: kernel '{}' cannot run {} at M={} ({})", report.path, entry->name,
                                      module.module, size, *why));
        }
      }
      if (std::find(names.begin(), names.end(), entry->name) == names.end()) names.push_back(entry->name);
    }
  }
  backend = first->backend;
  return names;
}

// Seeds: each module's weights apart from every other's; each (size, module, copy)'s activations apart.
uint64_t module_weight_seed(uint64_t seed, std::size_t module) {
  return kernels::synthetic::mix(seed ^ (0xC2B2AE3D27D4EB4Full * (uint64_t(module) + 1)));
}
uint64_t activation_seed(uint64_t seed, int64_t size, std::size_t module, int copy) {
  return operand_set_seed(kernels::synthetic::mix(seed ^ (uint64_t(size) << 24) ^ uint64_t(module)), copy + 1);
}

// One module's weights for the current kernel: copy c is the weights of layers c, c + copies, ...
struct ModuleWeights {
  std::string kernel;
  std::unique_ptr<SessionPool> pool;
};

class StepReplayer {
 public:
  StepReplayer(kernels::Device& device, const CaptureReplayPlan& plan, const VerifyCaptureRequest& request)
      : device_(device), plan_(plan), request_(request), weights_(plan.report.modules.size()) {
    for (const CaptureReportModule& module : plan.report.modules) max_layers_ = std::max(max_layers_, module.layers);
  }

  ReplayedSize replay(int64_t size) {
    const auto& modules = plan_.report.modules;
    ReplayedSize result;
    result.size = size;
    result.predicted_us = plan_.report.step_us.at(size);
    std::vector<std::vector<std::unique_ptr<kernels::PreparedGemm>>> prepared(modules.size());
    for (std::size_t j = 0; j < modules.size(); ++j) {
      const std::string& kernel = modules[j].kernel_at.at(size);
      result.kernels[modules[j].module] = kernel;
      ModuleWeights& weights = weights_[j];
      if (weights.kernel != kernel) {
        weights.pool.reset();  // frees the other kernel's weights before these are made
        weights.pool = std::make_unique<SessionPool>(
            *registered(kernel), device_,
            kernels::WeightShape{modules[j].n, modules[j].k, modules[j].batch_count},
            module_weight_seed(request_.seed, j));
        weights.kernel = kernel;
      }
      prepared[j].push_back(weights.pool->first().prepare(size, activation_seed(request_.seed, size, j, 0)));
    }
    if (copies_ == 0) copies_ = copies_that_fit(prepared);

    std::string why;
    for (std::size_t j = 0; j < modules.size(); ++j) {
      const int wanted = int(std::min<int64_t>(copies_, modules[j].layers));
      const int open = weights_[j].pool->ensure(wanted, why);
      for (int copy = 1; copy < open; ++copy) {
        try {
          prepared[j].push_back(weights_[j].pool->at(copy).prepare(size, activation_seed(request_.seed, size, j, copy)));
        } catch (const std::exception& error) {
          why = error.what();
          break;
        }
      }
    }
    check_first_copies(modules, prepared, result);

    std::vector<kernels::PreparedGemm*> step;  // layer by layer, the modules in the report's order
    double step_bytes = 0;
    bool rotating = false;
    for (int64_t layer = 0; layer < max_layers_; ++layer) {
      for (std::size_t j = 0; j < modules.size(); ++j) {
        if (layer >= modules[j].layers) continue;
        step.push_back(prepared[j][std::size_t(layer) % prepared[j].size()].get());
      }
    }
    result.weight_copies = max_layers_;
    for (std::size_t j = 0; j < modules.size(); ++j) {
      for (const auto& gemm : prepared[j]) step_bytes += gemm->min_bytes();
      const auto copies = int64_t(prepared[j].size());
      if (copies < modules[j].layers) {
        rotating = true;
        result.weight_copies = std::min(result.weight_copies, copies);
      }
    }
    if (rotating) {
      rotated_ = true;
      const double l2_bytes = double(device_.info().l2_bytes);
      const bool cold = step_bytes >= kRotationL2Multiple * l2_bytes;
      add_note(result, fmt::format("layers rotate over {} weight copies per module ({:.1f} MB, {:.1f}x the L2: {}){}{}",
                                   result.weight_copies, step_bytes / 1e6, step_bytes / l2_bytes,
                                   cold ? "still cold" : "partly warm", why.empty() ? "" : "; ", why));
    }

    MeasureOptions options = request_.measure;
    options.timing = kernels::TimingMode::graph;
    options.hot = false;
    const Measurement measured = measure(device_, step, options);
    const double launches = double(step.size());
    result.launches = int64_t(step.size());
    result.measured_us = measured.median_us * launches;
    result.ci95_us = measured.ci95_us * launches;
    result.samples = measured.samples;
    if (measured.throttled) add_note(result, "the SM clock fell during the replay");
    return result;
  }

  // True once some size ran with fewer weight copies than layers.
  bool rotated() const { return rotated_; }

 private:
  static void add_note(ReplayedSize& result, const std::string& note) {
    result.note += (result.note.empty() ? "" : "; ") + note;
  }

  // Weight copies per module so that every copy of every module fits in a share of the
  // free memory (each copy with its own activations and output at the first size, the largest).
  int64_t copies_that_fit(const std::vector<std::vector<std::unique_ptr<kernels::PreparedGemm>>>& prepared) const {
    double layer_bytes = 0;
    for (const auto& module : prepared) layer_bytes += module.front()->min_bytes();
    const double fitting = std::floor(kRotationMemoryShare * double(device_.free_memory_bytes()) / layer_bytes) + 1;
    return int64_t(std::clamp(fitting, 1.0, double(max_layers_)));
  }

  void check_first_copies(const std::vector<CaptureReportModule>& modules,
                          const std::vector<std::vector<std::unique_ptr<kernels::PreparedGemm>>>& prepared,
                          ReplayedSize& result) const {
    for (std::size_t j = 0; j < modules.size(); ++j) {
      const kernels::CheckResult check = prepared[j].front()->check();
      if (!(check.rel_err <= result.max_rel_err)) result.max_rel_err = check.rel_err;
      if (!check.passed(request_.check_threshold)) {
        add_note(result, fmt::format("{} failed its check (rel_err {:.3g}, {} unwritten)", modules[j].module,
                                     check.rel_err, check.unwritten));
      }
    }
  }

  kernels::Device& device_;
  const CaptureReplayPlan& plan_;
  const VerifyCaptureRequest& request_;
  std::vector<ModuleWeights> weights_;
  int64_t max_layers_ = 0;
  int64_t copies_ = 0;  // decided at the first size replayed
  bool rotated_ = false;
};

void warm_up(kernels::Device& device, const CaptureReplayPlan& plan, uint64_t seed) {
  std::vector<GemmProblem> problems;
  for (const CaptureReportModule& module : plan.report.modules) {
    GemmProblem problem;
    problem.model = plan.report.model;
    problem.module = module.module;
    problem.n = module.n;
    problem.k = module.k;
    problem.batch_count = module.batch_count;
    problems.push_back(problem);
  }
  warm_up_for_sweep(device, {plan.sizes.back()}, problems, plan.kernels, seed);
}

}  // namespace

CaptureReplayPlan plan_capture_replay(const VerifyCaptureRequest& request) {
  CaptureReplayPlan plan;
  plan.report = read_capture_report(request.report_path);
  plan.baseline = request.baseline;
  plan.candidate = request.candidate.empty() ? plan.report.recommended : request.candidate;
  plan.report.list(plan.baseline);
  plan.report.list(plan.candidate);
  if (plan.baseline == plan.candidate) {
    throw UserError(fmt::format("{}: the list to check is the baseline itself ({}); name another list",
                                request.report_path, plan.baseline));
  }
  check_dense(plan.report);
  std::set<int64_t> sizes;
  for (const std::string& key : {plan.baseline, plan.candidate}) {
    for (const int64_t size : sizes_serving_batches(plan.report, key)) sizes.insert(size);
  }
  plan.sizes.assign(sizes.begin(), sizes.end());
  if (plan.sizes.empty()) {
    throw UserError(fmt::format("{}: no batch has a positive weight, so no size serves one; pass the JSON analyze "
                                "--capture-sizes --json wrote",
                                request.report_path));
  }
  plan.kernels = check_kernels(plan.report, plan.sizes, plan.backend);
  return plan;
}

CaptureReplayOutcome replay_capture_sizes(kernels::Device& device, const CaptureReplayPlan& plan,
                                          const VerifyCaptureRequest& request) {
  if (device.kind() != plan.backend) {
    throw UserError(fmt::format("{}: its kernels run on the {} backend, the device is {}", request.report_path,
                                kernels::to_string(plan.backend), kernels::to_string(device.kind())));
  }
  CaptureReplayOutcome outcome;
  CaptureVerification& verification = outcome.verification;
  verification.device = device.info().name;
  verification.report = request.report_path;
  verification.model = plan.report.model;
  verification.tp = plan.report.tp;
  verification.programmatic_launch = request.programmatic_launch && device.kind() == kernels::BackendKind::cuda;
  if (!plan.report.device.empty() && plan.report.device != verification.device) {
    verification.notes.push_back(fmt::format("the report's profiles were measured on {}, this replay ran on {}",
                                             plan.report.device, verification.device));
  }
  device.set_programmatic_launch(verification.programmatic_launch);
  if (request.warm_up && device.kind() == kernels::BackendKind::cuda) warm_up(device, plan, request.seed);

  StepReplayer replayer(device, plan, request);
  // Largest first: the weight copies are sized where the activations are largest.
  for (auto size = plan.sizes.rbegin(); size != plan.sizes.rend(); ++size) {
    if (interrupt_requested()) {
      outcome.interrupted = true;
      return outcome;
    }
    ReplayedSize replayed = replayer.replay(*size);
    fmt::print(stderr, "verify-capture-sizes: M={}: {} GEMMs, predicted {:.1f} us, measured {:.1f} us ({:+.2f}%){}{}\n",
               replayed.size, replayed.launches, replayed.predicted_us, replayed.measured_us, replayed.error_pct(),
               replayed.note.empty() ? "" : "; ", replayed.note);
    verification.sizes.push_back(std::move(replayed));
  }
  std::reverse(verification.sizes.begin(), verification.sizes.end());
  if (replayer.rotated()) {
    verification.notes.push_back("free memory did not hold every layer's weights: layers rotate over fewer copies "
                                 "(each size's note says how many and whether the L2 could still carry them)");
  }
  verification.baseline = replay_list(plan.report, plan.baseline, verification.sizes);
  verification.candidate = replay_list(plan.report, plan.candidate, verification.sizes);

  outcome.written_path = request.out_path.empty() ? default_verify_output(request.report_path) : request.out_path;
  write_file_atomically(outcome.written_path, json_text(capture_verification_json(verification), 2));
  return outcome;
}

int verify_capture_cli(VerifyCaptureRequest request, const ProfileRequest& profile, const std::string& out_path,
                       BusyPolicy busy, bool warm_up) {
  check_numeric_options(profile);
  register_all_kernels();
  request.out_path = out_path;
  request.measure = profile.measure;
  request.seed = profile.seed;
  request.warm_up = warm_up;
  request.programmatic_launch = programmatic_launch_for(profile.pdl, kernels::TimingMode::graph);
  const CaptureReplayPlan plan = plan_capture_replay(request);
  ensure_writable_file(request.out_path.empty() ? default_verify_output(request.report_path) : request.out_path,
                       "--verify-out");
  std::unique_ptr<kernels::Device> device;
  if (plan.backend == kernels::BackendKind::cuda) {
    device = kernels::make_cuda_device();
    if (!device) {
      throw UserError(fmt::format("{}: its kernels run on CUDA, and no GPU is usable: {}", request.report_path,
                                  kernels::cuda_unavailable_reason()));
    }
  } else {
    device = kernels::make_cpu_device(profile.threads);
  }
  const auto device_lock = hold_sweep_device(*device, busy);
  fmt::print(stderr, "verify-capture-sizes: {} at tp{}: {} sizes ({} against {}), {} modules, on {}\n",
             plan.report.model, plan.report.tp, plan.sizes.size(), plan.candidate, plan.baseline,
             plan.report.modules.size(), device->info().name);
  const CaptureReplayOutcome outcome = replay_capture_sizes(*device, plan, request);
  if (outcome.interrupted) {
    fmt::print(stderr, "verify-capture-sizes: interrupted; nothing written\n");
    return kExitInterrupted;
  }
  fmt::print("{}", capture_verification_text(outcome.verification));
  fmt::print("wrote {}\n", outcome.written_path);
  return 0;
}

}  // namespace shapescope::profiler
