#include "analyze/step_time_model.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/enum_names.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

// Left-out grid values named in a note before "and N more".
constexpr std::size_t kNotedValues = 6;

struct Fastest {
  double time_us = 0;
  const Series* series = nullptr;
  const SeriesPoint* point = nullptr;
};

// The fastest of a module's profiles at each M any of them measured.
std::map<int64_t, Fastest> fastest_per_m(const std::vector<const Series*>& profiles) {
  std::map<int64_t, Fastest> fastest;
  for (const Series* series : profiles) {
    for (const SeriesPoint& point : series->points) {
      auto [found, inserted] = fastest.try_emplace(point.m, Fastest{point.time_us, series, &point});
      if (!inserted && point.time_us < found->second.time_us) found->second = {point.time_us, series, &point};
    }
  }
  return fastest;
}

ModulePoint point_from(const Fastest& fastest) {
  ModulePoint point;
  point.time_us = fastest.time_us;
  point.kernel = fastest.series->kernel;
  point.kernel_name = fastest.point->kernel_name;
  point.profiled_m = fastest.point->m;
  return point;
}

// Expected experts holding at least one of `tokens` tokens when each token picks top_k
// distinct experts uniformly: E * (1 - (1 - top_k/E)^tokens).
double expected_active_experts(int64_t tokens, const GemmProblem& problem) {
  const auto experts = static_cast<double>(problem.experts);
  return experts * (1.0 - std::pow(1.0 - static_cast<double>(problem.top_k) / experts, static_cast<double>(tokens)));
}

// A per-expert module at `tokens` tokens, or nullopt when its profile ends below the
// rows each active expert gets. The expected rows (tokens * top_k / active) round to the
// nearest whole row, then up to the next profiled M.
std::optional<ModulePoint> per_expert_point(int64_t tokens, const GemmProblem& problem,
                                            const std::map<int64_t, Fastest>& fastest) {
  const double active = expected_active_experts(tokens, problem);
  const double rows = static_cast<double>(tokens * problem.top_k) / active;
  const int64_t needed = std::max<int64_t>(1, std::llround(rows));
  const auto found = fastest.lower_bound(needed);
  if (found == fastest.end()) return std::nullopt;
  ModulePoint point = point_from(found->second);
  point.time_us = active * found->second.time_us;
  point.active_experts = active;
  return point;
}

std::string module_names(const std::vector<std::string>& names) { return fmt::format("{}", fmt::join(names, ", ")); }

// A grouped profile of routed experts under expert parallelism: whole experts per GPU, N and K
// unsplit, at any TP degree of the attention and dense layers.
bool expert_parallel(const Series& series) { return series.grouped && series.grouped->ep > 1; }

// The profile the others are compared with: the first that is not expert-parallel.
const Series& reference_profile(const std::vector<Series>& profiles) {
  const auto found = std::find_if(profiles.begin(), profiles.end(),
                                  [](const Series& series) { return !expert_parallel(series); });
  return found == profiles.end() ? profiles.front() : *found;
}

void check_same_setting(const Series& series, const Series& first) {
  const auto mixed = [&](const char* what, const std::string& a, const std::string& b) {
    throw UserError(fmt::format("profiles of different {} mixed: {} is {}, {} is {}; pass the profiles of one model "
                                "at one TP degree on one device",
                                what, first.source, a, series.source, b));
  };
  if (series.model != first.model) mixed("models", first.model, series.model);
  if (series.tp != first.tp && !expert_parallel(series)) {
    mixed("TP degrees", fmt::format("tp{}", first.tp), fmt::format("tp{}", series.tp));
  }
  if (series.device != first.device) mixed("devices", first.device, series.device);
}

// The catalog's GEMM for `series`' module at its TP (at the EP degree for expert-parallel profiles),
// after checking the profile measured that shape.
const GemmProblem& problem_of(const Series& series, const ModelSpec& spec, const std::vector<GemmProblem>& problems) {
  const auto found = std::find_if(problems.begin(), problems.end(),
                                  [&](const GemmProblem& problem) { return problem.module == series.module; });
  if (found == problems.end()) {
    std::vector<std::string> names;
    for (const GemmProblem& problem : problems) names.push_back(problem.module);
    throw UserError(fmt::format("{}: module '{}' is not a module of {} (its modules: {})", series.source,
                                series.module, spec.name, module_names(names)));
  }
  if (series.n != found->n || series.k != found->k || series.batch_count != found->batch_count) {
    const std::string setting = expert_parallel(series) ? fmt::format("ep{}", series.grouped->ep)
                                                        : fmt::format("tp{}", series.tp);
    throw UserError(fmt::format("{}: measured N={} K={} batch={}, but {} {} at {} is N={} K={} batch={}; re-profile "
                                "the module or fix the catalog",
                                series.source, series.n, series.k, series.batch_count, spec.name, series.module,
                                setting, found->n, found->k, found->batch_count));
  }
  if (series.grouped && found->experts == 0) {
    throw UserError(fmt::format("{}: a grouped profile of {}, which has no experts; grouped profiles are for expert "
                                "modules",
                                series.source, series.module));
  }
  return *found;
}

// "M=1 (missing in o_proj, q_b_proj), M=2 (...), and 3 more".
std::string left_out_note(const std::set<int64_t>& left_out, const std::vector<ModuleTerm>& modules,
                          const std::vector<std::map<int64_t, Fastest>>& fastest) {
  std::vector<std::string> entries;
  for (const int64_t m : left_out) {
    if (entries.size() == kNotedValues) break;
    std::vector<std::string> lacking;
    for (std::size_t i = 0; i < modules.size(); ++i) {
      if (modules[i].cost_model != ModuleCostModel::per_expert && !fastest[i].contains(m)) {
        lacking.push_back(modules[i].problem.module);
      }
    }
    entries.push_back(fmt::format("M={} (missing in {})", m, module_names(lacking)));
  }
  const std::string more =
      left_out.size() > kNotedValues ? fmt::format(", and {} more", left_out.size() - kNotedValues) : "";
  return fmt::format("left out of the grid, not measured by every module: {}{}", fmt::join(entries, ", "), more);
}

// The EP degree of the expert-parallel grouped profiles of expert modules (1 when none); one per step.
int expert_parallel_degree(const std::vector<Series>& profiles, const std::vector<GemmProblem>& problems) {
  const Series* first = nullptr;
  for (const Series& series : profiles) {
    if (!expert_parallel(series)) continue;
    const auto problem = std::find_if(problems.begin(), problems.end(),
                                      [&](const GemmProblem& p) { return p.module == series.module; });
    if (problem == problems.end() || problem->experts == 0) continue;  // problem_of names these
    if (first && series.grouped->ep != first->grouped->ep) {
      throw UserError(fmt::format("grouped profiles of different EP degrees mixed: {} is ep{}, {} is ep{}; pass the "
                                  "expert profiles of one EP degree",
                                  first->source, first->grouped->ep, series.source, series.grouped->ep));
    }
    if (!first) first = &series;
  }
  return first ? static_cast<int>(first->grouped->ep) : 1;
}

// A module's grouped profiles must all be expert-parallel or all split by TP: their shapes differ.
void check_one_grouped_setting(const std::string& module, const std::vector<const Series*>& given) {
  const Series* by_tp = nullptr;
  const Series* by_ep = nullptr;
  for (const Series* series : given) {
    if (!series->grouped) continue;
    (expert_parallel(*series) ? by_ep : by_tp) = series;
  }
  if (by_tp && by_ep) {
    throw UserError(fmt::format("{}: grouped profiles split by TP ({}) and by EP ({}) mixed; pass one kind", module,
                                by_tp->source, by_ep->source));
  }
}

}  // namespace

constexpr EnumName<ModuleCostModel> kModuleCostModelNames[] = {
    {ModuleCostModel::dense, "dense"},
    {ModuleCostModel::grouped, "grouped"},
    {ModuleCostModel::per_expert, "per_expert"},
};

std::string to_string(ModuleCostModel model) { return name_of(kModuleCostModelNames, model); }

const std::string& profiled_model(const std::vector<Series>& profiles) {
  if (profiles.empty()) {
    throw UserError("--capture-sizes needs the model's profiles; pass one CSV per module and kernel");
  }
  for (const Series& series : profiles) {
    if (series.format != "shapescope" || series.model.empty() || series.module.empty() || series.tp <= 0) {
      throw UserError(fmt::format("{}: no sidecar naming model, module and tp (a raw --shape profile names none); "
                                  "--capture-sizes needs shapescope profiles with the .json profile writes beside "
                                  "each CSV",
                                  series.source));
    }
    check_same_setting(series, reference_profile(profiles));
  }
  return reference_profile(profiles).model;
}

StepTimeModel build_step_time_model(const ModelSpec& spec, const std::vector<Series>& profiles,
                                    const std::vector<std::string>& excluded_modules) {
  const Series& reference = reference_profile(profiles);
  if (profiled_model(profiles) != spec.name) {
    throw UserError(fmt::format("{} profiles {}, but the model given is {}", reference.source, reference.model,
                                spec.name));
  }
  StepTimeModel result;
  result.model = spec.name;
  result.tp = reference.tp;
  result.device = reference.device;
  ModelCatalog catalog;
  catalog.add(spec);
  const std::vector<GemmProblem> problems = catalog.problems(spec.name, "all", result.tp);
  result.ep = expert_parallel_degree(profiles, problems);
  const std::vector<GemmProblem> ep_problems =
      result.ep > 1 ? catalog.problems(spec.name, "all", result.tp, result.ep) : problems;
  for (const std::string& name : excluded_modules) {
    if (std::none_of(problems.begin(), problems.end(), [&](const GemmProblem& p) { return p.module == name; })) {
      throw UserError(fmt::format("--exclude-module {}: not a module of {}", name, spec.name));
    }
  }

  std::map<std::string, std::vector<const Series*>> by_module;
  for (const Series& series : profiles) {
    problem_of(series, spec, expert_parallel(series) ? ep_problems : problems);
    by_module[series.module].push_back(&series);
  }
  std::vector<std::string> missing;
  for (const GemmProblem& problem : problems) {
    if (std::find(excluded_modules.begin(), excluded_modules.end(), problem.module) != excluded_modules.end()) {
      result.excluded.push_back(problem.module);
      continue;
    }
    const auto given = by_module.find(problem.module);
    if (given == by_module.end()) {
      missing.push_back(problem.module);
      continue;
    }
    ModuleTerm term;
    term.problem = problem;
    term.layers = layers_running(spec, problem.module);
    const bool any_grouped = std::any_of(given->second.begin(), given->second.end(),
                                         [](const Series* series) { return series->grouped.has_value(); });
    if (any_grouped && std::any_of(given->second.begin(), given->second.end(), [](const Series* series) {
          return expert_parallel(*series);
        })) {
      check_one_grouped_setting(problem.module, given->second);
      term.problem = *std::find_if(ep_problems.begin(), ep_problems.end(),
                                   [&](const GemmProblem& p) { return p.module == problem.module; });
      result.notes.push_back(fmt::format("{}: grouped profiles at ep{} ({} of {} experts per GPU, N and K unsplit) "
                                         "beside the other modules at tp{}",
                                         problem.module, result.ep, term.problem.local_experts, term.problem.experts,
                                         result.tp));
    }
    for (const Series* series : given->second) {
      if (series->grouped.has_value() == any_grouped) term.profiles.push_back(series);
    }
    if (any_grouped && term.profiles.size() < given->second.size()) {
      result.notes.push_back(fmt::format("{}: grouped profiles given, its per-expert profiles are not used",
                                         problem.module));
    }
    term.cost_model = problem.experts == 0 ? ModuleCostModel::dense
                      : any_grouped        ? ModuleCostModel::grouped
                                           : ModuleCostModel::per_expert;
    result.modules.push_back(std::move(term));
  }
  if (!missing.empty()) {
    throw UserError(fmt::format("no profile for {} module(s) of {} at tp{}: {}; profile them (profile --model {} "
                                "--module NAME --tp {}) or leave them out with --exclude-module NAME",
                                missing.size(), spec.name, result.tp, module_names(missing), spec.name, result.tp));
  }
  if (result.modules.empty()) throw UserError("--exclude-module left no module of the model; exclude fewer");

  std::vector<std::map<int64_t, Fastest>> fastest;
  for (const ModuleTerm& term : result.modules) fastest.push_back(fastest_per_m(term.profiles));
  std::optional<std::set<int64_t>> token_grid;
  std::set<int64_t> measured_somewhere;
  for (std::size_t i = 0; i < result.modules.size(); ++i) {
    if (result.modules[i].cost_model == ModuleCostModel::per_expert) continue;
    std::set<int64_t> measured;
    for (const auto& [m, unused] : fastest[i]) measured.insert(m);
    measured_somewhere.insert(measured.begin(), measured.end());
    if (!token_grid) {
      token_grid = measured;
    } else {
      std::erase_if(*token_grid, [&](int64_t m) { return !measured.contains(m); });
    }
  }
  if (!token_grid) {
    throw UserError("every module given is a per-expert profile; the step's M axis needs at least one module "
                    "profiled over tokens");
  }
  std::set<int64_t> left_out;
  std::set_difference(measured_somewhere.begin(), measured_somewhere.end(), token_grid->begin(), token_grid->end(),
                      std::inserter(left_out, left_out.end()));
  if (!left_out.empty()) result.notes.push_back(left_out_note(left_out, result.modules, fastest));

  std::vector<std::string> expert_limits;
  for (const int64_t m : *token_grid) {
    std::vector<ModulePoint> points;
    for (std::size_t i = 0; i < result.modules.size(); ++i) {
      const ModuleTerm& term = result.modules[i];
      if (term.cost_model != ModuleCostModel::per_expert) {
        points.push_back(point_from(fastest[i].at(m)));
      } else if (std::optional<ModulePoint> point = per_expert_point(m, term.problem, fastest[i])) {
        points.push_back(*point);
      } else {
        expert_limits.push_back(fmt::format("M={} ({} needs more rows per expert than it measured)", m,
                                            term.problem.module));
        break;
      }
    }
    if (points.size() < result.modules.size()) continue;
    double step = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      step += static_cast<double>(result.modules[i].layers) * points[i].time_us;
      result.modules[i].points.push_back(std::move(points[i]));
    }
    result.grid.push_back(m);
    result.step_us.push_back(step);
  }
  if (!expert_limits.empty()) {
    const std::string more =
        expert_limits.size() > 1 ? fmt::format(" and {} larger M", expert_limits.size() - 1) : "";
    result.notes.push_back(fmt::format("left out of the grid: {}{}", expert_limits.front(), more));
  }
  for (const ModuleTerm& term : result.modules) {
    if (term.cost_model != ModuleCostModel::per_expert) continue;
    result.notes.push_back(fmt::format(
        "{}: per-expert profile; at M tokens, E(1 - (1 - k/E)^M) experts are expected active under uniform routing "
        "(E={}, k={}), each running M*k/active rows (to the nearest row, then up to the next profiled M); a grouped "
        "profile of the module (profile --module experts) replaces this",
        term.problem.module, term.problem.experts, term.problem.top_k));
  }
  if (result.grid.empty()) {
    throw UserError(fmt::format("no M is measured by every module of {} at tp{}; profile the modules over a common "
                                "M list (e.g. profile --m-preset cudagraph)",
                                spec.name, result.tp));
  }
  return result;
}

}  // namespace shapescope::analyze
