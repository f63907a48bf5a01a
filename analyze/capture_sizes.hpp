// CUDA-graph capture sizes: an engine (vLLM, SGLang) captures one graph per size in a
// list and pads each batch b up to the smallest captured size >= b. Under a batch-size
// distribution w, a list S costs sum_b w(b) * T(min{s in S : s >= b}) / sum_b w(b),
// with T the step time at each size. optimal_capture_list finds the cheapest list of
// at most N sizes exactly, by dynamic programming over the sorted candidate sizes.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace shapescope::analyze {

struct CaptureProblem {
  std::vector<int64_t> sizes;                       // candidate sizes, strictly ascending
  std::vector<double> time_us;                      // step time at each candidate
  std::vector<std::pair<int64_t, double>> batches;  // (batch, weight > 0), ascending; each <= sizes.back()
};

// One size of a list and the batches padded up to it.
struct SizeUse {
  int64_t size = 0;
  double time_us = 0;         // T(size)
  std::size_t batches = 0;    // batch sizes (weight > 0) it serves
  int64_t batch_min = 0;      // smallest and largest of them; 0 when it serves none
  int64_t batch_max = 0;
  double weight = 0;          // their share of the total weight
  double mean_padding = 0;    // weighted mean of size - batch over them
};

struct CaptureEvaluation {
  std::vector<int64_t> sizes;   // ascending
  double expected_us = 0;       // the distribution's mean padded step time
  std::vector<SizeUse> uses;    // parallel to sizes
};

// The smallest size in `sizes` (ascending) that is >= batch; 0 when none is.
int64_t served_size(const std::vector<int64_t>& sizes, int64_t batch);

// Evaluates a list of candidate sizes whose largest covers the largest batch.
// Throws std::invalid_argument otherwise (callers build lists from the candidates).
CaptureEvaluation evaluate_capture_list(const CaptureProblem& problem, std::vector<int64_t> sizes);

// The cheapest list of at most max_graphs (>= 1) candidate sizes covering the largest
// batch; among lists of equal cost, the one with the fewest sizes. O(N * n^2) for n
// candidates, N capped at the sizes the unconstrained optimum needs.
CaptureEvaluation optimal_capture_list(const CaptureProblem& problem, std::size_t max_graphs);

}  // namespace shapescope::analyze
