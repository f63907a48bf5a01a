// The capture-size optimizer against brute force over every subset, the list
// evaluation, the batch distributions, and the recommendation against vLLM's default.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

#include <gtest/gtest.h>

#include "analyze/batch_distribution.hpp"
#include "analyze/capture_recommendation.hpp"
#include "analyze/capture_report.hpp"
#include "analyze/capture_sizes.hpp"
#include "common/engine_capture_sizes.hpp"
#include "common/user_error.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope::analyze {
namespace {

// Sum of w(b) * T(smallest size >= b), straight from the definition; infinity when a
// batch has no size at or above it.
double weighted_cost(const CaptureProblem& problem, const std::vector<int64_t>& list) {
  double cost = 0;
  for (const auto& [batch, weight] : problem.batches) {
    double best_time = std::numeric_limits<double>::infinity();
    int64_t best_size = std::numeric_limits<int64_t>::max();
    for (std::size_t i = 0; i < problem.sizes.size(); ++i) {
      const int64_t size = problem.sizes[i];
      const bool listed = std::find(list.begin(), list.end(), size) != list.end();
      if (listed && size >= batch && size < best_size) {
        best_size = size;
        best_time = problem.time_us[i];
      }
    }
    cost += weight * best_time;
  }
  return cost;
}

double total_weight(const CaptureProblem& problem) {
  double total = 0;
  for (const auto& [batch, weight] : problem.batches) total += weight;
  return total;
}

// Random candidates (gaps 1..4), non-monotone times (anomalies), a random subset of
// batches with random weights.
CaptureProblem random_problem(std::mt19937& random, std::size_t candidates) {
  CaptureProblem problem;
  std::uniform_int_distribution<int64_t> gap(1, 4);
  std::uniform_real_distribution<double> time(1.0, 100.0);
  int64_t size = 0;
  for (std::size_t i = 0; i < candidates; ++i) {
    size += gap(random);
    problem.sizes.push_back(size);
    problem.time_us.push_back(time(random));
  }
  std::bernoulli_distribution present(0.5);
  std::uniform_real_distribution<double> weight(0.1, 10.0);
  for (int64_t batch = 1; batch <= problem.sizes.back(); ++batch) {
    if (present(random)) problem.batches.emplace_back(batch, weight(random));
  }
  if (problem.batches.empty()) problem.batches.emplace_back(problem.sizes.back(), 1.0);
  return problem;
}

struct BruteForce {
  double cost = std::numeric_limits<double>::infinity();
  std::size_t fewest_sizes = 0;  // among lists within rounding of the cheapest
};

BruteForce brute_force(const CaptureProblem& problem, std::size_t budget) {
  const std::size_t n = problem.sizes.size();
  std::vector<std::pair<double, std::size_t>> costs;
  for (uint32_t mask = 1; mask < (1u << n); ++mask) {
    std::vector<int64_t> list;
    for (std::size_t i = 0; i < n; ++i) {
      if (mask & (1u << i)) list.push_back(problem.sizes[i]);
    }
    if (list.size() > budget || list.back() < problem.batches.back().first) continue;
    costs.emplace_back(weighted_cost(problem, list), list.size());
  }
  BruteForce result;
  for (const auto& [cost, count] : costs) result.cost = std::min(result.cost, cost);
  result.fewest_sizes = n;
  for (const auto& [cost, count] : costs) {
    if (cost <= result.cost * (1 + 1e-9)) result.fewest_sizes = std::min(result.fewest_sizes, count);
  }
  return result;
}

TEST(CaptureSizesOptimizer, MatchesBruteForceOverEverySubset) {
  std::mt19937 random(20261122);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t candidates = 1 + static_cast<std::size_t>(trial % 11);
    const CaptureProblem problem = random_problem(random, candidates);
    for (std::size_t budget = 1; budget <= candidates + 1; ++budget) {
      const BruteForce expected = brute_force(problem, budget);
      const CaptureEvaluation found = optimal_capture_list(problem, budget);
      const double found_cost = weighted_cost(problem, found.sizes);
      ASSERT_LE(found.sizes.size(), budget);
      ASSERT_GE(found.sizes.back(), problem.batches.back().first);
      ASSERT_NEAR(found_cost, expected.cost, 1e-9 * expected.cost) << "trial " << trial << " budget " << budget;
      ASSERT_NEAR(found.expected_us, found_cost / total_weight(problem), 1e-9 * found.expected_us);
      ASSERT_EQ(found.sizes.size(), expected.fewest_sizes) << "trial " << trial << " budget " << budget;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 405);  // 60 problems of 1..11 candidates, every budget up to one past them
}

TEST(CaptureSizesOptimizer, PadsPastASlowSizeWhenALargerOneIsFaster) {
  // T(8) is an anomaly: batch 8 is cheaper padded to 12, and a single graph must cover 12.
  const CaptureProblem problem{{4, 8, 12}, {10, 50, 20}, {{4, 1.0}, {8, 1.0}}};
  EXPECT_EQ(optimal_capture_list(problem, 1).sizes, (std::vector<int64_t>{12}));
  EXPECT_EQ(optimal_capture_list(problem, 2).sizes, (std::vector<int64_t>{4, 12}));
  // A third graph cannot help: the result keeps two.
  EXPECT_EQ(optimal_capture_list(problem, 3).sizes, (std::vector<int64_t>{4, 12}));
  EXPECT_DOUBLE_EQ(optimal_capture_list(problem, 2).expected_us, 15.0);
}

TEST(CaptureSizesEvaluation, TablesWhichBatchesLandOnEachSize) {
  const CaptureProblem problem{{2, 4, 8}, {1, 2, 4}, {{1, 1.0}, {2, 1.0}, {3, 2.0}, {7, 4.0}}};
  const CaptureEvaluation evaluation = evaluate_capture_list(problem, {8, 2});
  ASSERT_EQ(evaluation.uses.size(), 2u);
  EXPECT_EQ(evaluation.uses[0].size, 2);
  EXPECT_EQ(evaluation.uses[0].batches, 2u);
  EXPECT_EQ(evaluation.uses[0].batch_min, 1);
  EXPECT_EQ(evaluation.uses[0].batch_max, 2);
  EXPECT_DOUBLE_EQ(evaluation.uses[0].weight, 2.0 / 8);
  EXPECT_DOUBLE_EQ(evaluation.uses[0].mean_padding, 0.5);
  EXPECT_EQ(evaluation.uses[1].batch_min, 3);
  EXPECT_EQ(evaluation.uses[1].batch_max, 7);
  EXPECT_DOUBLE_EQ(evaluation.uses[1].mean_padding, (2.0 * 5 + 4.0 * 1) / 6);
  EXPECT_DOUBLE_EQ(evaluation.expected_us, (2 * 1.0 + 6 * 4.0) / 8);
  EXPECT_THROW(evaluate_capture_list(problem, {4}), std::invalid_argument);  // 7 is not covered
  EXPECT_THROW(evaluate_capture_list(problem, {5, 8}), std::invalid_argument);  // 5 is not a candidate
}

TEST(CaptureEngineSyntax, WritesEachEnginesFlags) {
  EXPECT_EQ(vllm_compilation_config({1, 8, 24}), R"(--compilation-config '{"cudagraph_capture_sizes": [1, 8, 24]}')");
  EXPECT_EQ(vllm_cuda_graph_sizes({1, 8, 24}), "--cuda-graph-sizes 1 8 24");
  EXPECT_EQ(vllm_cuda_graph_sizes({24}), "");  // vLLM would read one value as 1, 2, 4, 8..24
  EXPECT_EQ(sglang_cuda_graph_bs({1, 8, 24}), "--cuda-graph-bs 1 8 24");
}

TEST(BatchDistribution, NamedShapes) {
  const MWeights uniform = batch_distribution("uniform:3", std::nullopt);
  EXPECT_EQ(uniform.weights(), (std::map<int64_t, double>{{1, 1.0}, {2, 1.0}, {3, 1.0}}));
  const MWeights geometric = batch_distribution("geometric:0.5", 3);
  EXPECT_EQ(geometric.weights(), (std::map<int64_t, double>{{1, 1.0}, {2, 0.5}, {3, 0.25}}));
  const MWeights zipf = batch_distribution("zipf:1", 3);
  ASSERT_EQ(zipf.weights().size(), 3u);
  EXPECT_DOUBLE_EQ(zipf.weight(3), 1.0 / 3);
  EXPECT_EQ(zipf.source(), "zipf:1");
}

std::string distribution_error(const std::string& spec, std::optional<int64_t> max_batch) {
  return testing_support::user_error_of([&] { batch_distribution(spec, max_batch); });
}

TEST(BatchDistribution, BadSpecsSayHowToFixThem) {
  EXPECT_NE(distribution_error("geometric:0.9", std::nullopt).find("add --max-batch"), std::string::npos);
  EXPECT_NE(distribution_error("geometric:1.5", 8).find("strictly between 0 and 1"), std::string::npos);
  EXPECT_NE(distribution_error("uniform:0", 8).find("positive integer"), std::string::npos);
  EXPECT_NE(distribution_error("uniform:2.5", 8).find("positive integer"), std::string::npos);
  EXPECT_NE(distribution_error("uniform:16", 8).find("beyond --max-batch 8"), std::string::npos);
  EXPECT_NE(distribution_error("zipf:0", 8).find("S must be positive"), std::string::npos);
  EXPECT_NE(distribution_error("poisson:3", 8).find("no such file and not a named distribution"), std::string::npos);
}

// A model stand-in: recommend_capture_sizes reads only the grid and the step times.
StepTimeModel grid_model(std::vector<int64_t> grid, std::vector<double> step_us) {
  StepTimeModel model;
  model.model = "toy";
  model.tp = 1;
  model.grid = std::move(grid);
  model.step_us = std::move(step_us);
  return model;
}

const EvaluatedList& list_named(const CaptureRecommendation& recommendation, const std::string& key) {
  for (const EvaluatedList& list : recommendation.lists) {
    if (list.key == key) return list;
  }
  throw std::runtime_error("no list " + key);
}

TEST(CaptureRecommendation, NeverWorseThanTheDefaultUnderItsBudget) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> slope(0.5, 2.0);
  std::bernoulli_distribution anomaly(0.1);
  const std::vector<std::string> shapes = {"uniform:B", "geometric:0.97", "zipf:1.1", "histogram"};
  for (int trial = 0; trial < 24; ++trial) {
    // Grids with holes (some default sizes not measured) and anomalies in T.
    std::vector<int64_t> grid;
    std::vector<double> step;
    std::bernoulli_distribution measured(0.7);
    for (int64_t m = 1; m <= 320; ++m) {
      if (m % 4 != 0 && m > 16) continue;
      if (m != 320 && !measured(random)) continue;
      grid.push_back(m);
      step.push_back(100 + slope(random) * static_cast<double>(m) * (anomaly(random) ? 1.6 : 1.0));
    }
    const StepTimeModel model = grid_model(grid, step);
    const int64_t max_batch = std::uniform_int_distribution<int64_t>(20, 320)(random);
    const std::string& shape = shapes[static_cast<std::size_t>(trial) % shapes.size()];
    MWeights weights;
    if (shape == "histogram") {
      std::map<int64_t, double> histogram;
      for (int64_t b = 1; b <= max_batch; b += std::uniform_int_distribution<int64_t>(1, 9)(random)) {
        histogram[b] = std::uniform_real_distribution<double>(0, 5)(random);
      }
      histogram[max_batch] = 1;
      weights = MWeights::from_weights(histogram, "histogram");
    } else {
      const std::string spec = shape == "uniform:B" ? fmt::format("uniform:{}", max_batch) : shape;
      weights = batch_distribution(spec, max_batch);
    }
    CaptureOptions options;
    options.max_batch = max_batch;
    options.max_graphs = std::uniform_int_distribution<int64_t>(1, 12)(random);
    const CaptureRecommendation recommendation = recommend_capture_sizes(model, weights, options);
    const EvaluatedList& by_default = recommendation.vllm_default();
    const EvaluatedList& same_budget = list_named(recommendation, "optimum_default_budget");
    const EvaluatedList& unconstrained = list_named(recommendation, "unconstrained");
    const EvaluatedList& capped = list_named(recommendation, "optimum_max_graphs");
    EXPECT_EQ(same_budget.budget, by_default.budget);
    EXPECT_LE(same_budget.evaluation.sizes.size(), by_default.budget);
    EXPECT_LE(same_budget.evaluation.expected_us, by_default.evaluation.expected_us * (1 + 1e-12)) << trial;
    EXPECT_LE(unconstrained.evaluation.expected_us, same_budget.evaluation.expected_us * (1 + 1e-12)) << trial;
    EXPECT_LE(unconstrained.evaluation.expected_us, capped.evaluation.expected_us * (1 + 1e-12)) << trial;
    EXPECT_LE(capped.evaluation.sizes.size(), static_cast<std::size_t>(*options.max_graphs));
    EXPECT_EQ(&recommendation.recommended(), &capped);
    // Every list covers the engine's largest batch from the grid.
    for (const EvaluatedList& list : recommendation.lists) {
      EXPECT_GE(list.evaluation.sizes.back(), recommendation.largest_batch);
      EXPECT_LE(list.evaluation.sizes.back(), served_size(grid, max_batch));
    }
  }
}

TEST(CaptureRecommendation, DefaultListIsRoundedUpToTheGridAndSaysSo) {
  // 1 and 2 are not measured: the default's 1, 2, 4 all run at 4.
  const StepTimeModel model = grid_model({4, 8, 16, 24, 32}, {10, 11, 12, 13, 14});
  const CaptureRecommendation recommendation = recommend_capture_sizes(model, batch_distribution("uniform:32", 32), {});
  const EvaluatedList& by_default = recommendation.vllm_default();
  EXPECT_EQ(by_default.budget, 7u);  // 1, 2, 4, 8, 16, 24, 32
  EXPECT_EQ(by_default.evaluation.sizes, (std::vector<int64_t>{4, 8, 16, 24, 32}));
  ASSERT_EQ(by_default.notes.size(), 2u);
  EXPECT_NE(by_default.notes[0].find("1->4, 2->4"), std::string::npos) << by_default.notes[0];
  EXPECT_NE(by_default.notes[1].find("7 sizes, 5 distinct"), std::string::npos) << by_default.notes[1];
  EXPECT_NE(recommendation.notes.back().find("batches below 4"), std::string::npos);
}

TEST(CaptureRecommendation, DefaultListStoppingBelowTheMaxBatchIsCompletedAndSaysSo) {
  const StepTimeModel model = grid_model({8, 16, 24, 28, 32}, {10, 11, 12, 13, 14});
  CaptureOptions options;
  options.max_batch = 28;
  const CaptureRecommendation recommendation =
      recommend_capture_sizes(model, batch_distribution("uniform:28", 28), options);
  // vLLM's sizes <= 28 stop at 24; batches 25..28 need 28 appended.
  EXPECT_EQ(recommendation.vllm_default().evaluation.sizes, (std::vector<int64_t>{8, 16, 24, 28}));
  EXPECT_NE(recommendation.vllm_default().notes[0].find("stop at 24"), std::string::npos);
  EXPECT_EQ(recommendation.problem.sizes.back(), 28);  // no candidate beyond the max batch's cover
}

std::string recommendation_error(const StepTimeModel& model, const std::string& spec, CaptureOptions options) {
  return testing_support::user_error_of(
      [&] { recommend_capture_sizes(model, batch_distribution(spec, options.max_batch), options); });
}

TEST(CaptureRecommendation, BadInputIsOneLineNamingTheFix) {
  const StepTimeModel model = grid_model({1, 2, 4, 8}, {1, 2, 3, 4});
  CaptureOptions zero_graphs;
  zero_graphs.max_graphs = 0;
  EXPECT_NE(recommendation_error(model, "uniform:8", zero_graphs).find("--max-graphs 0: a capture list needs at least "
                                                                     "one graph"),
            std::string::npos);
  EXPECT_NE(recommendation_error(model, "uniform:9", {}).find("weight at batch 9, above the largest M every module "
                                                             "measured (8)"),
            std::string::npos);
  CaptureOptions too_large;
  too_large.max_batch = 16;
  EXPECT_NE(recommendation_error(model, "uniform:8", too_large).find("--max-batch 16 exceeds the largest M"),
            std::string::npos);
  EXPECT_EQ(recommendation_error(model, "uniform:8", {}), "");  // the same model accepts a valid distribution
  EXPECT_THROW(recommend_capture_sizes(model, MWeights::from_weights({{2, 0.0}}, "h.csv"), {}), UserError);
  EXPECT_THROW(recommend_capture_sizes(model, MWeights::from_weights({{0, 1.0}}, "h.csv"), {}), UserError);
  CaptureOptions small;
  small.max_batch = 4;
  try {
    recommend_capture_sizes(model, MWeights::from_weights({{6, 1.0}}, "h.csv"), small);
    ADD_FAILURE() << "a batch above --max-batch was accepted";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("above --max-batch 4"), std::string::npos) << error.what();
  }
}

TEST(EngineCaptureSizes, VllmDefaultIsOneTwoFourThenStepsOfEightTo512) {
  const std::vector<int64_t> sizes = vllm_default_capture_sizes();
  ASSERT_EQ(sizes.size(), 67u);
  EXPECT_EQ(sizes[2], 4);
  EXPECT_EQ(sizes[3], 8);
  EXPECT_EQ(sizes[4], 16);
  EXPECT_EQ(sizes.back(), 512);
}

}  // namespace
}  // namespace shapescope::analyze
