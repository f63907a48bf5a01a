#include "analyze/capture_report.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

namespace shapescope::analyze {

using nlohmann::json;

namespace {

// The kernels that are fastest at some grid M, in first-use order.
std::vector<std::string> kernels_used(const ModuleTerm& term) {
  std::vector<std::string> kernels;
  for (const ModulePoint& point : term.points) {
    if (std::find(kernels.begin(), kernels.end(), point.kernel) == kernels.end()) kernels.push_back(point.kernel);
  }
  return kernels;
}

std::string batch_range(const SizeUse& use) {
  if (use.batches == 0) return "-";
  if (use.batch_min == use.batch_max) return fmt::format("{}", use.batch_min);
  return fmt::format("{}-{} ({})", use.batch_min, use.batch_max, use.batches);
}

json list_json(const CaptureRecommendation& recommendation, const EvaluatedList& list) {
  json table = json::array();
  for (const SizeUse& use : list.evaluation.uses) {
    table.push_back({{"size", use.size},
                     {"step_us", use.time_us},
                     {"batches", use.batches},
                     {"batch_min", use.batch_min},
                     {"batch_max", use.batch_max},
                     {"weight", use.weight},
                     {"mean_padding", use.mean_padding}});
  }
  const double default_us = recommendation.vllm_default().evaluation.expected_us;
  return {{"key", list.key},
          {"label", list.label},
          {"budget", list.budget},
          {"graphs", list.evaluation.sizes.size()},
          {"sizes", list.evaluation.sizes},
          {"expected_step_us", list.evaluation.expected_us},
          {"vs_default_pct", 100 * (list.evaluation.expected_us / default_us - 1)},
          {"vllm_compilation_config", vllm_compilation_config(list.evaluation.sizes)},
          {"vllm_cuda_graph_sizes", vllm_cuda_graph_sizes(list.evaluation.sizes)},
          {"sglang_cuda_graph_bs", sglang_cuda_graph_bs(list.evaluation.sizes)},
          {"notes", list.notes},
          {"table", table}};
}

json module_json(const ModuleTerm& term, const std::vector<int64_t>& grid) {
  json points = json::array();
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const ModulePoint& point = term.points[i];
    points.push_back({{"m", grid[i]},
                      {"time_us", point.time_us},
                      {"kernel", point.kernel},
                      {"kernel_name", point.kernel_name},
                      {"profiled_m", point.profiled_m},
                      {"active_experts", point.active_experts}});
  }
  json profiles = json::array();
  for (const Series* series : term.profiles) profiles.push_back({{"path", series->source}, {"kernel", series->kernel}});
  const GemmProblem& problem = term.problem;
  return {{"module", problem.module},
          {"n", problem.n},
          {"k", problem.k},
          {"batch_count", problem.batch_count},
          {"experts", problem.experts},
          {"top_k", problem.top_k},
          {"ep", problem.ep},
          {"local_experts", problem.local_experts},
          {"layers", term.layers},
          {"cost_model", to_string(term.cost_model)},
          {"profiles", profiles},
          {"points", points}};
}

void print_size_table(std::ostream& out, const EvaluatedList& list) {
  fmt::print(out, "  {} - per size:\n", list.label);
  fmt::print(out, "  {:>7}  {:<18} {:>7} {:>9} {:>12} {:>10}\n", "size", "batches (count)", "weight", "mean pad",
             "T(size) us", "time share");
  for (const SizeUse& use : list.evaluation.uses) {
    const double time_share = use.weight * use.time_us / list.evaluation.expected_us;
    fmt::print(out, "  {:>7}  {:<18} {:>6.1f}% {:>9.2f} {:>12.1f} {:>9.1f}%\n", use.size, batch_range(use),
               100 * use.weight, use.mean_padding, use.time_us, 100 * time_share);
  }
}

std::string join_sizes(const std::vector<int64_t>& sizes, const char* separator) {
  return fmt::format("{}", fmt::join(sizes, separator));
}

}  // namespace

std::string vllm_compilation_config(const std::vector<int64_t>& sizes) {
  return fmt::format("--compilation-config '{{\"cudagraph_capture_sizes\": [{}]}}'", join_sizes(sizes, ", "));
}

std::string vllm_cuda_graph_sizes(const std::vector<int64_t>& sizes) {
  return sizes.size() < 2 ? "" : "--cuda-graph-sizes " + join_sizes(sizes, " ");
}

std::string sglang_cuda_graph_bs(const std::vector<int64_t>& sizes) {
  return "--cuda-graph-bs " + join_sizes(sizes, " ");
}

double module_share(const StepTimeModel& model, std::size_t module, int64_t m) {
  const auto index = static_cast<std::size_t>(std::lower_bound(model.grid.begin(), model.grid.end(), m) -
                                              model.grid.begin());
  const ModuleTerm& term = model.modules.at(module);
  return static_cast<double>(term.layers) * term.points.at(index).time_us / model.step_us.at(index);
}

std::string change_against_default(const CaptureRecommendation& recommendation, const EvaluatedList& list) {
  if (&list == &recommendation.vllm_default()) return "-";
  return fmt::format("{:+.2f}%",
                     100 * (list.evaluation.expected_us / recommendation.vllm_default().evaluation.expected_us - 1));
}

void print_capture_recommendation(std::ostream& out, const CaptureRecommendation& recommendation) {
  const StepTimeModel& model = *recommendation.model;
  fmt::print(out, "capture sizes for {} at tp{}{}{}\n", model.model, model.tp,
             model.ep > 1 ? fmt::format(" (routed experts at ep{})", model.ep) : "",
             model.device.empty() ? "" : " on " + model.device);
  fmt::print(out,
             "  step time T(M) = sum over {} module(s) of layers x the module's fastest profile at M; "
             "grid: {} M values {}..{} measured by every module\n",
             model.modules.size(), model.grid.size(), model.grid.front(), model.grid.back());
  const int64_t last_size = recommendation.problem.sizes.back();
  fmt::print(out, "  {:<28} {:>6} {:>6} {:>5} {:>6}  {:<10} {:>9}  {}\n", "module", "N", "K", "batch", "layers",
             "model", fmt::format("%T({})", last_size), "fastest kernels");
  for (std::size_t i = 0; i < model.modules.size(); ++i) {
    const ModuleTerm& term = model.modules[i];
    const GemmProblem& problem = term.problem;
    fmt::print(out, "  {:<28} {:>6} {:>6} {:>5} {:>6}  {:<10} {:>8.1f}%  {}\n", problem.module, problem.n, problem.k,
               problem.batch_count, term.layers, to_string(term.cost_model),
               100 * module_share(model, i, last_size), fmt::join(kernels_used(term), ", "));
  }
  if (!model.excluded.empty()) fmt::print(out, "  left out (--exclude-module): {}\n", fmt::join(model.excluded, ", "));
  for (const std::string& note : model.notes) fmt::print(out, "  note: {}\n", note);
  fmt::print(out, "  batches: {}, {} batch sizes up to {}, max batch {}\n", recommendation.distribution,
             recommendation.problem.batches.size(), recommendation.largest_batch, recommendation.max_batch);
  for (const std::string& note : recommendation.notes) fmt::print(out, "  note: {}\n", note);
  fmt::print(out, "  {:<56} {:>6} {:>18} {:>11}\n", "list", "graphs", "expected step us", "vs default");
  for (const EvaluatedList& list : recommendation.lists) {
    fmt::print(out, "  {:<56} {:>6} {:>18.2f} {:>11}\n", list.label, list.evaluation.sizes.size(),
               list.evaluation.expected_us, change_against_default(recommendation, list));
    for (const std::string& note : list.notes) fmt::print(out, "      {}\n", note);
  }
  const EvaluatedList& recommended = recommendation.recommended();
  fmt::print(out, "  recommended: {}\n", recommended.label);
  fmt::print(out, "    vLLM:   {}\n", vllm_compilation_config(recommended.evaluation.sizes));
  if (const std::string sizes = vllm_cuda_graph_sizes(recommended.evaluation.sizes); !sizes.empty()) {
    fmt::print(out, "            {}\n", sizes);
  }
  fmt::print(out, "    SGLang: {}\n", sglang_cuda_graph_bs(recommended.evaluation.sizes));
  print_size_table(out, recommended);
}

json capture_recommendation_json(const CaptureRecommendation& recommendation) {
  const StepTimeModel& model = *recommendation.model;
  json grid = json::array();
  for (std::size_t i = 0; i < model.grid.size(); ++i) {
    grid.push_back({{"m", model.grid[i]}, {"step_us", model.step_us[i]}});
  }
  json modules = json::array();
  for (const ModuleTerm& term : model.modules) modules.push_back(module_json(term, model.grid));
  json lists = json::array();
  for (const EvaluatedList& list : recommendation.lists) lists.push_back(list_json(recommendation, list));

  double total_weight = 0;
  for (const auto& [batch, weight] : recommendation.problem.batches) total_weight += weight;
  json batches = json::array();
  for (const auto& [batch, weight] : recommendation.problem.batches) {
    json served = json::object();
    for (const EvaluatedList& list : recommendation.lists) {
      const int64_t size = served_size(list.evaluation.sizes, batch);
      const auto use = std::find_if(list.evaluation.uses.begin(), list.evaluation.uses.end(),
                                    [&](const SizeUse& candidate) { return candidate.size == size; });
      served[list.key] = {{"size", size}, {"step_us", use->time_us}};
    }
    batches.push_back({{"batch", batch}, {"weight", weight / total_weight}, {"served", served}});
  }
  std::vector<std::string> notes = model.notes;
  notes.insert(notes.end(), recommendation.notes.begin(), recommendation.notes.end());
  return {{"tool", "shapescope analyze --capture-sizes"},
          {"model", model.model},
          {"tp", model.tp},
          {"ep", model.ep},
          {"device", model.device},
          {"distribution",
           {{"spec", recommendation.distribution},
            {"batch_sizes", recommendation.problem.batches.size()},
            {"largest_batch", recommendation.largest_batch},
            {"max_batch", recommendation.max_batch}}},
          {"grid", grid},
          {"candidates", recommendation.problem.sizes},
          {"modules", modules},
          {"excluded_modules", model.excluded},
          {"notes", notes},
          {"recommended", recommendation.recommended().key},
          {"lists", lists},
          {"batches", batches}};
}

}  // namespace shapescope::analyze
