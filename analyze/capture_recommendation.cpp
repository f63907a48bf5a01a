#include "analyze/capture_recommendation.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/engine_capture_sizes.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

// Rounded-up default sizes named in a note before "and N more".
constexpr std::size_t kNotedRoundings = 8;

void check_options(const CaptureOptions& options) {
  if (options.max_graphs && *options.max_graphs < 1) {
    throw UserError(fmt::format("--max-graphs {}: a capture list needs at least one graph (the one covering the "
                                "largest batch)",
                                *options.max_graphs));
  }
  if (options.max_batch && *options.max_batch < 1) {
    throw UserError(fmt::format("--max-batch {}: the engine's largest batch must be at least 1", *options.max_batch));
  }
}

std::vector<std::pair<int64_t, double>> weighted_batches(const MWeights& weights, const StepTimeModel& model,
                                                         const CaptureOptions& options) {
  std::vector<std::pair<int64_t, double>> batches;
  for (const auto& [batch, weight] : weights.weights()) {
    if (!(weight > 0)) continue;
    if (batch < 1) {
      throw UserError(fmt::format("{}: M={} is not a batch size; batches start at 1", weights.source(), batch));
    }
    batches.emplace_back(batch, weight);
  }
  if (batches.empty()) {
    throw UserError(fmt::format("{}: every weight is 0; give some batch a positive weight", weights.source()));
  }
  const int64_t largest = batches.back().first;
  const int64_t grid_end = model.grid.back();
  if (largest > grid_end) {
    throw UserError(fmt::format("{} has weight at batch {}, above the largest M every module measured ({}); profile "
                                "larger M or cut the distribution at {}",
                                weights.source(), largest, grid_end, grid_end));
  }
  if (options.max_batch && largest > *options.max_batch) {
    throw UserError(fmt::format("{} has weight at batch {}, above --max-batch {}; raise --max-batch or cut the "
                                "distribution",
                                weights.source(), largest, *options.max_batch));
  }
  if (options.max_batch && *options.max_batch > grid_end) {
    throw UserError(fmt::format("--max-batch {} exceeds the largest M every module measured ({}); profile up to it or "
                                "lower --max-batch",
                                *options.max_batch, grid_end));
  }
  return batches;
}

// The smallest grid size >= m (m is at most the grid's end).
int64_t grid_cover(const std::vector<int64_t>& grid, int64_t m) { return served_size(grid, m); }

// vLLM's default sizes up to the max batch, each rounded up to the grid; the size covering
// the largest batch is appended when the defaults stop below it.
EvaluatedList vllm_default_list(const CaptureRecommendation& recommendation) {
  const std::vector<int64_t>& grid = recommendation.model->grid;
  EvaluatedList list;
  list.key = "vllm_default";
  std::vector<int64_t> defaults;
  for (const int64_t size : vllm_default_capture_sizes()) {
    if (size <= recommendation.max_batch) defaults.push_back(size);
  }
  std::vector<int64_t> sizes;
  std::vector<std::string> rounded;
  for (const int64_t size : defaults) {
    const int64_t on_grid = grid_cover(grid, size);
    if (on_grid != size) rounded.push_back(fmt::format("{}->{}", size, on_grid));
    sizes.push_back(on_grid);
  }
  const int64_t cover = grid_cover(grid, recommendation.largest_batch);
  // The defaults start at 1, so at least one is <= any max batch.
  if (sizes.back() < recommendation.largest_batch) {
    list.notes.push_back(fmt::format("vLLM's default sizes up to max batch {} stop at {}, so larger batches would run "
                                     "without a graph; evaluated with {} appended",
                                     recommendation.max_batch, defaults.back(), cover));
    sizes.push_back(cover);
  }
  if (!rounded.empty()) {
    const std::string more =
        rounded.size() > kNotedRoundings ? fmt::format(", and {} more", rounded.size() - kNotedRoundings) : "";
    rounded.resize(std::min(rounded.size(), kNotedRoundings));
    list.notes.push_back(fmt::format("default sizes not on the grid are evaluated at the next grid size: {}{}",
                                     fmt::join(rounded, ", "), more));
  }
  list.budget = sizes.size();
  list.evaluation = evaluate_capture_list(recommendation.problem, sizes);
  if (list.evaluation.sizes.size() < list.budget) {
    list.notes.push_back(fmt::format("{} sizes, {} distinct on the grid", list.budget, list.evaluation.sizes.size()));
  }
  list.label = fmt::format("vLLM default ({} graphs)", list.budget);
  return list;
}

EvaluatedList optimum(const CaptureProblem& problem, std::string key, std::string label, std::size_t budget) {
  EvaluatedList list;
  list.key = std::move(key);
  list.label = std::move(label);
  list.budget = budget;
  list.evaluation = optimal_capture_list(problem, budget);
  return list;
}

}  // namespace

const EvaluatedList& CaptureRecommendation::recommended() const {
  for (const EvaluatedList& list : lists) {
    if (list.key == "optimum_max_graphs") return list;
  }
  return lists.at(1);
}

CaptureRecommendation recommend_capture_sizes(const StepTimeModel& model, const MWeights& weights,
                                              const CaptureOptions& options) {
  check_options(options);
  CaptureRecommendation recommendation;
  recommendation.model = &model;
  recommendation.distribution = weights.source();
  recommendation.problem.batches = weighted_batches(weights, model, options);
  recommendation.largest_batch = recommendation.problem.batches.back().first;
  recommendation.max_batch = options.max_batch.value_or(recommendation.largest_batch);
  // Sizes above the one covering the max batch serve no batch the engine forms.
  const int64_t last_size = grid_cover(model.grid, recommendation.max_batch);
  for (std::size_t i = 0; i < model.grid.size() && model.grid[i] <= last_size; ++i) {
    recommendation.problem.sizes.push_back(model.grid[i]);
    recommendation.problem.time_us.push_back(model.step_us[i]);
  }
  if (last_size > recommendation.max_batch) {
    recommendation.notes.push_back(fmt::format("max batch {} is not on the grid: the largest candidate is {}, so the "
                                               "engine's max batch must be at least {} to capture it",
                                               recommendation.max_batch, last_size, last_size));
  }
  if (recommendation.problem.batches.front().first < model.grid.front()) {
    recommendation.notes.push_back(fmt::format("batches below {} (the smallest M every module measured) are padded to "
                                               "at least {}",
                                               model.grid.front(), model.grid.front()));
  }

  recommendation.lists.push_back(vllm_default_list(recommendation));
  const std::size_t default_budget = recommendation.lists.front().budget;
  const std::string default_label = fmt::format("optimum, at most {} graphs (the default's count)", default_budget);
  recommendation.lists.push_back(
      optimum(recommendation.problem, "optimum_default_budget", default_label, default_budget));
  if (options.max_graphs) {
    const auto budget = static_cast<std::size_t>(*options.max_graphs);
    recommendation.lists.push_back(optimum(recommendation.problem, "optimum_max_graphs",
                                           fmt::format("optimum, at most {} graphs (--max-graphs)", budget), budget));
  }
  const std::size_t candidates = recommendation.problem.sizes.size();
  recommendation.lists.push_back(
      optimum(recommendation.problem, "unconstrained", "optimum without a graph budget", candidates));
  recommendation.lists.back().label =
      fmt::format("optimum without a graph budget ({} graphs)", recommendation.lists.back().evaluation.sizes.size());
  return recommendation;
}

}  // namespace shapescope::analyze
