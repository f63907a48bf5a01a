// From a model's step time T(M) and a batch-size distribution to capture lists: vLLM's
// default list evaluated on the grid, the exact optimum under the default's graph count
// and under --max-graphs, and the optimum without a budget (the floor any list can reach).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyze/capture_sizes.hpp"
#include "analyze/m_weights.hpp"
#include "analyze/step_time_model.hpp"

namespace shapescope::analyze {

struct CaptureOptions {
  std::optional<int64_t> max_graphs;  // --max-graphs: the most graphs the engine may capture
  std::optional<int64_t> max_batch;   // --max-batch: the engine's largest batch (default: the distribution's)
};

struct EvaluatedList {
  std::string key;           // vllm_default | optimum_default_budget | optimum_max_graphs | unconstrained
  std::string label;         // for people
  std::size_t budget = 0;    // graphs allowed; the list may use fewer
  CaptureEvaluation evaluation;
  std::vector<std::string> notes;
};

struct CaptureRecommendation {
  const StepTimeModel* model = nullptr;  // must outlive the recommendation
  std::string distribution;              // what --m-weights named
  CaptureProblem problem;                // candidate sizes (grid up to the cover) and weighted batches
  int64_t largest_batch = 0;             // the largest batch with weight > 0
  int64_t max_batch = 0;                 // --max-batch, else largest_batch
  std::vector<EvaluatedList> lists;      // vLLM default first
  std::vector<std::string> notes;

  const EvaluatedList& vllm_default() const { return lists.front(); }
  // The list to deploy: the --max-graphs optimum when a budget was given, else the
  // optimum at the default's graph count.
  const EvaluatedList& recommended() const;
};

// Throws UserError (one line) on a budget or max batch below 1, a distribution with no
// positive weight, batches below 1 or above the largest grid M or --max-batch, and a
// --max-batch above the largest grid M.
CaptureRecommendation recommend_capture_sizes(const StepTimeModel& model, const MWeights& weights,
                                              const CaptureOptions& options);

}  // namespace shapescope::analyze
