// `profile --verify-plans report.json`: the analyzer's best split plans run for
// real on the GPU. For each plan: the monolithic GEMM, every part alone (their
// sum is the prediction, re-measured in this run), the parts back to back on one
// stream and concurrently on two, all through the same measurement core. The
// result is the JSON of common/verify_results.hpp, verdicts included.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/plan_report.hpp"
#include "common/verify_results.hpp"
#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"

namespace shapescope::profiler {

struct VerifyRequest {
  std::string report_path;
  std::string out_path;            // "" = the report's path with .verify.json instead of .json
  MeasureOptions measure;
  int max_plans_per_series = 10;   // the plans with the largest predicted gain first
  uint64_t seed = 1;
  double check_threshold = kernels::kCheckThreshold;
};

// "a/report.json" -> "a/report.verify.json"
std::string default_verify_output(const std::string& report_path);

// Measures every plan, writes request.out_path (atomically) and returns what it wrote.
VerifyResults verify_plans(kernels::Device& device, const VerifyRequest& request);

}  // namespace shapescope::profiler
