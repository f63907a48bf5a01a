// How a capture-size recommendation is shown: the lists in each engine's syntax, the
// terminal summary and the JSON report. The JSON carries what a later GPU replay of the
// model's GEMM sequence needs: every list, each module's shape, layers and kernel per
// grid M, and the predicted step time of every weighted batch under every list.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/capture_recommendation.hpp"

namespace shapescope::analyze {

// vLLM: --compilation-config '{"cudagraph_capture_sizes": [1, 2, 4]}'
std::string vllm_compilation_config(const std::vector<int64_t>& sizes);
// vLLM: --cuda-graph-sizes 1 2 4; "" for a single size, which vLLM reads as the largest of
// 1, 2, 4, 8..N step 8.
std::string vllm_cuda_graph_sizes(const std::vector<int64_t>& sizes);
// SGLang: --cuda-graph-bs 1 2 4
std::string sglang_cuda_graph_bs(const std::vector<int64_t>& sizes);

// The share of T(m) that module `module` takes (m on the grid).
double module_share(const StepTimeModel& model, std::size_t module, int64_t m);

// "-1.9%" against the default list's expected step time.
std::string change_against_default(const CaptureRecommendation& recommendation, const EvaluatedList& list);

void print_capture_recommendation(std::ostream& out, const CaptureRecommendation& recommendation);

nlohmann::json capture_recommendation_json(const CaptureRecommendation& recommendation);

}  // namespace shapescope::analyze
