// What `profile --verify-plans report.json` measured: each split plan run for
// real on the GPU, its sub-GEMMs back to back on one stream and concurrently on
// two, next to the monolithic GEMM. The one writer (verify_results_json,
// verified_plan_json: profile) and the one reader (read_verify_results: analyze
// --verify-results) of this JSON. Schema (times in µs; unknown keys are ignored):
//   {"device": "NVIDIA H100 80GB HBM3",            (optional)
//    "plans": [{"series": "llama3_8b_gate_up_tp2",  (optional: which profile)
//               "m": 2180, "parts": [1088, 1092],
//               "predicted_us": 180.2,               (summed single-call times)
//               "measured_serial_us": 185.0,
//               "measured_two_streams_us": 176.4,
//               "monolithic_us": 240.1,
//               "verdict": "confirmed"}]}           (confirmed | weaker | refuted)
// Verdict: the measured gain, (monolithic − the faster of serial and two
// streams) / monolithic, is confirmed at ≥ half the predicted gain, weaker when
// positive but below that, refuted at ≤ 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/plan_report.hpp"

namespace shapescope {

struct VerifiedPlan {
  std::string series;
  int64_t m = 0;
  std::vector<int64_t> parts;
  double predicted_us = 0;
  double measured_serial_us = 0;
  double measured_two_streams_us = 0;
  double monolithic_us = 0;
  std::string verdict;

  double predicted_gain() const;
  double measured_gain() const;  // with the faster of the two measured launches
};

struct VerifyResults {
  std::string source;
  std::string device;
  std::vector<VerifiedPlan> plans;
  std::size_t count(const std::string& verdict) const;
};

// "confirmed" | "weaker" | "refuted" from the two gains, as defined above.
std::string plan_verdict(double predicted_gain, double measured_gain);

// The file's frame, {"device", "report", "plans": [], "skipped": []}: entries go into "plans" and "skipped".
nlohmann::json verify_results_json(const std::string& device, const std::string& report_path);
// One entry of "plans": what was measured for `reported`, its worst rel_err and a note on any failed check.
nlohmann::json verified_plan_json(const ReportedPlan& reported, const VerifiedPlan& verified, double max_rel_err,
                                  const std::string& note);

// Throws UserError naming the file, the plan and the field when the JSON does not fit the schema.
VerifyResults read_verify_results(const std::string& path);

}  // namespace shapescope
