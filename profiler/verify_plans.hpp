// `profile --verify-plans report.json`: the analyzer's best split plans run for
// real on the GPU. For each plan: the monolithic GEMM, every part alone (their
// sum is the prediction, re-measured in this run), the parts back to back on one
// stream and concurrently on two, all through the same measurement core. The
// result is the JSON of analyze/verify_results.hpp, verdicts included.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/verify_results.hpp"
#include "kernels/kernel.hpp"
#include "profiler/measure.hpp"

namespace shapescope::profiler {

struct VerifyRequest {
  std::string report_path;
  std::string out_path;            // "" = the report's path with .verify.json instead of .json
  MeasureOptions measure;
  int max_plans_per_series = 10;   // the plans with the largest predicted gain first
  uint64_t seed = 1;
  double check_threshold = 1e-2;
};

// A plan as the analyzer's report states it.
struct ReportedPlan {
  std::string series, kernel, kind;
  int64_t n = 0, k = 0, batch_count = 1;
  int64_t m = 0;
  std::vector<int64_t> parts;
  double reported_time_us = 0, reported_predicted_us = 0, reported_gain_pct = 0;
};

// Every anomaly's best plan in the report, at most `max_per_series` per series (largest gain first).
// Throws UserError naming the file and the fix when it is not an analyzer report.
std::vector<ReportedPlan> read_reported_plans(const std::string& report_path, int max_per_series);

// "a/report.json" -> "a/report.verify.json"
std::string default_verify_output(const std::string& report_path);

// Measures every plan, writes request.out_path (atomically) and returns what it wrote.
analyze::VerifyResults verify_plans(kernels::Device& device, const VerifyRequest& request);

}  // namespace shapescope::profiler
