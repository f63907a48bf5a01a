#include "analyze/capture_sizes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace shapescope::analyze {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// A list replaces a cheaper-or-equal one only when it is cheaper by more than rounding.
constexpr double kRelativeTolerance = 1e-12;

void validate(const CaptureProblem& problem) {
  if (problem.sizes.empty() || problem.sizes.size() != problem.time_us.size()) {
    throw std::invalid_argument("capture problem: sizes and times must be non-empty and parallel");
  }
  if (!std::is_sorted(problem.sizes.begin(), problem.sizes.end()) ||
      std::adjacent_find(problem.sizes.begin(), problem.sizes.end()) != problem.sizes.end()) {
    throw std::invalid_argument("capture problem: sizes must be strictly ascending");
  }
  if (problem.batches.empty() || problem.batches.back().first > problem.sizes.back()) {
    throw std::invalid_argument("capture problem: batches must be non-empty and covered by the largest size");
  }
  for (std::size_t i = 0; i < problem.batches.size(); ++i) {
    if (!(problem.batches[i].second > 0) || (i > 0 && problem.batches[i].first <= problem.batches[i - 1].first)) {
      throw std::invalid_argument("capture problem: batches must be ascending with positive weights");
    }
  }
}

// mass[j]: the weight of the batches in (sizes[j-1], sizes[j]], which sizes[j] serves
// whenever it is the smallest listed size above sizes[j-1].
std::vector<double> mass_between_sizes(const CaptureProblem& problem) {
  std::vector<double> mass(problem.sizes.size(), 0.0);
  std::size_t j = 0;
  for (const auto& [batch, weight] : problem.batches) {
    while (problem.sizes[j] < batch) ++j;
    mass[j] += weight;
  }
  return mass;
}

// How many sizes the unconstrained optimum uses: every batch at the fastest size >= it
// (ties: the smaller size). No list of more sizes can cost less.
std::size_t unconstrained_list_size(const CaptureProblem& problem) {
  const std::size_t n = problem.sizes.size();
  std::vector<std::size_t> fastest_from(n);
  fastest_from[n - 1] = n - 1;
  for (std::size_t j = n - 1; j-- > 0;) {
    const std::size_t later = fastest_from[j + 1];
    fastest_from[j] = problem.time_us[j] <= problem.time_us[later] ? j : later;
  }
  std::set<std::size_t> used;
  std::size_t j = 0;
  for (const auto& [batch, weight] : problem.batches) {
    while (problem.sizes[j] < batch) ++j;
    used.insert(fastest_from[j]);
  }
  return used.size();
}

}  // namespace

int64_t served_size(const std::vector<int64_t>& sizes, int64_t batch) {
  const auto found = std::lower_bound(sizes.begin(), sizes.end(), batch);
  return found == sizes.end() ? 0 : *found;
}

CaptureEvaluation evaluate_capture_list(const CaptureProblem& problem, std::vector<int64_t> sizes) {
  validate(problem);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.empty() || sizes.back() < problem.batches.back().first) {
    throw std::invalid_argument("capture list does not cover the largest batch");
  }
  CaptureEvaluation evaluation;
  evaluation.sizes = sizes;
  for (const int64_t size : sizes) {
    const auto candidate = std::lower_bound(problem.sizes.begin(), problem.sizes.end(), size);
    if (candidate == problem.sizes.end() || *candidate != size) {
      throw std::invalid_argument("capture list holds a size that is not a candidate");
    }
    SizeUse use;
    use.size = size;
    use.time_us = problem.time_us[static_cast<std::size_t>(candidate - problem.sizes.begin())];
    evaluation.uses.push_back(use);
  }
  double total_weight = 0;
  double weighted_time = 0;
  for (const auto& [batch, weight] : problem.batches) {
    const auto index = static_cast<std::size_t>(std::lower_bound(sizes.begin(), sizes.end(), batch) - sizes.begin());
    SizeUse& use = evaluation.uses[index];
    if (use.batches == 0) use.batch_min = batch;
    use.batch_max = batch;
    ++use.batches;
    use.weight += weight;
    use.mean_padding += weight * static_cast<double>(use.size - batch);
    total_weight += weight;
    weighted_time += weight * use.time_us;
  }
  for (SizeUse& use : evaluation.uses) {
    if (use.weight > 0) use.mean_padding /= use.weight;
    use.weight /= total_weight;
  }
  evaluation.expected_us = weighted_time / total_weight;
  return evaluation;
}

CaptureEvaluation optimal_capture_list(const CaptureProblem& problem, std::size_t max_graphs) {
  validate(problem);
  if (max_graphs == 0) throw std::invalid_argument("a capture list needs at least one size");
  const std::size_t n = problem.sizes.size();
  const std::vector<double> mass = mass_between_sizes(problem);
  const std::size_t rounds = std::min({max_graphs, n, unconstrained_list_size(problem)});
  // Smallest candidate index that covers the largest batch.
  const auto first_cover = static_cast<std::size_t>(
      std::lower_bound(problem.sizes.begin(), problem.sizes.end(), problem.batches.back().first) -
      problem.sizes.begin());

  // cost[k][j]: the cheapest list of k + 1 sizes whose largest is sizes[j], serving every
  // batch <= sizes[j]; previous[k][j]: the index of its second-largest size.
  std::vector<std::vector<double>> cost(rounds, std::vector<double>(n, kInfinity));
  std::vector<std::vector<std::size_t>> previous(rounds, std::vector<std::size_t>(n, n));
  double served = 0;
  for (std::size_t j = 0; j < n; ++j) {
    served += mass[j];
    cost[0][j] = served * problem.time_us[j];
  }
  for (std::size_t k = 1; k < rounds; ++k) {
    for (std::size_t j = k; j < n; ++j) {
      double segment = 0;  // weight of the batches in (sizes[i], sizes[j]]
      for (std::size_t i = j; i-- > k - 1;) {
        segment += mass[i + 1];
        const double candidate = cost[k - 1][i] + segment * problem.time_us[j];
        if (candidate < cost[k][j]) {
          cost[k][j] = candidate;
          previous[k][j] = i;
        }
      }
    }
  }

  std::size_t best_k = 0;
  std::size_t best_j = n;
  double best = kInfinity;
  for (std::size_t k = 0; k < rounds; ++k) {
    for (std::size_t j = first_cover; j < n; ++j) {
      if (best == kInfinity || cost[k][j] < best - kRelativeTolerance * std::abs(best)) {
        best = cost[k][j];
        best_k = k;
        best_j = j;
      }
    }
  }
  std::vector<int64_t> sizes;
  for (std::size_t k = best_k + 1, j = best_j; k-- > 0;) {
    sizes.push_back(problem.sizes[j]);
    j = previous[k][j];
  }
  return evaluate_capture_list(problem, sizes);
}

}  // namespace shapescope::analyze
