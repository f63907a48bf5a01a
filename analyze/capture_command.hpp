// `analyze --capture-sizes`: reads a model's profiles (one per module and kernel, sidecars
// beside them), builds its step time over M, and recommends CUDA-graph capture sizes for a
// batch-size distribution (terminal, --json, --report .html). The CLI fills the request.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analyze/analyze_command.hpp"
#include "analyze/capture_recommendation.hpp"

namespace shapescope::analyze {

struct CaptureRequest {
  bool enabled = false;                      // --capture-sizes
  CaptureOptions options;                    // --max-graphs, --max-batch
  std::string hf_config;                     // layers from a Hugging Face config.json instead of the catalog
  std::vector<std::string> exclude_modules;  // modules left out of the step
  std::string report_path;                   // --report: .html only
  std::string replay_path;                   // --capture-replay: profile --verify-capture-sizes' JSON to show
};

// Uses request.inputs, request.read, request.m_weights_path (the distribution) and
// request.json_path. Returns the exit code; throws UserError on bad input before any output.
int run_capture_sizes(const AnalyzeRequest& request, const CaptureRequest& capture, std::ostream& out);

}  // namespace shapescope::analyze
