// What `profile --verify-capture-sizes report.json` measured: the model's GEMM
// sequence for one decode step replayed as one CUDA graph at every captured size
// either of two lists serves a batch with, T(size) measured beside the report's
// predicted T(size), and the expected step time sum_b w(b) T(size serving b) under
// both lists, predicted and measured. The one writer (capture_verification_json:
// profile) and the one reader (read_capture_verification: analyze) of this JSON.
// Schema (times in µs; unknown keys are ignored):
//   {"device": "NVIDIA H100 80GB HBM3", "report": "capture.json", "model": "llama3_8b", "tp": 2,
//    "timing": "graph", "programmatic_launch": true,
//    "sizes": [{"size": 64, "predicted_us": 2012.9, "measured_us": 2031.0, "ci95_us": 1.2,
//               "samples": 40, "launches": 128, "weight_copies": 32, "max_rel_err": 0.002,
//               "kernels": {"qkv_proj": "fp8_blockscale", ...}, "note": ""}],
//    "baseline": {"key": "vllm_default", "label": …, "sizes": [...], "report_expected_us": …,
//                 "predicted_us": …, "measured_us": …},
//    "candidate": {…the same for the list compared with it…},
//    "saving": {"predicted_us": …, "predicted_pct": …, "measured_us": …, "measured_pct": …},
//    "notes": ["…"]}
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/capture_report_file.hpp"

namespace shapescope {

// One captured size: the whole step's GEMMs at M = size in one graph.
struct ReplayedSize {
  int64_t size = 0;
  double predicted_us = 0;   // the report's T(size)
  double measured_us = 0;    // median replay of the step
  double ci95_us = 0;        // half-width of the 95% interval of the mean replay
  int samples = 0;
  int64_t launches = 0;      // GEMMs in one step
  int64_t weight_copies = 0; // the most layers a module runs when every layer has its own weights, else the
                             // fewest weight copies a module's layers rotate over
  double max_rel_err = 0;    // worst check of the first copy of every module
  std::map<std::string, std::string> kernels;  // module -> kernel that ran
  std::string note;          // partly warm rotation, a failed check, a falling clock

  double error_pct() const { return predicted_us > 0 ? 100 * (measured_us / predicted_us - 1) : 0; }
};

// One list's expected step time, sum_b w(b) T(size serving b), from predicted and from measured T.
struct ListReplay {
  std::string key, label;
  std::vector<int64_t> sizes;
  double report_expected_us = 0;  // what the report says (its own sum over its grid)
  double predicted_us = 0;
  double measured_us = 0;
};

struct CaptureVerification {
  std::string device, report, model;
  int tp = 0;
  bool programmatic_launch = false;
  std::vector<ReplayedSize> sizes;  // ascending
  ListReplay baseline, candidate;
  std::vector<std::string> notes;

  // (baseline - candidate) / baseline, in %, of the predicted and the measured expected step time.
  double predicted_saving_pct() const;
  double measured_saving_pct() const;
};

// Every size that the list `key` serves a weighted batch with. Throws UserError when a
// batch names no size for the list.
std::vector<int64_t> sizes_serving_batches(const CaptureReportFile& report, const std::string& key);

// The list's expected step time from the report's batches and the replayed sizes
// (which must hold every size the list serves a batch with; std::out_of_range otherwise).
ListReplay replay_list(const CaptureReportFile& report, const std::string& key, const std::vector<ReplayedSize>& sizes);

nlohmann::json capture_verification_json(const CaptureVerification& verification);
// The terminal table: every size, both lists, the savings.
std::string capture_verification_text(const CaptureVerification& verification);

// Throws UserError naming the file and the field when the JSON does not fit the schema.
CaptureVerification read_capture_verification(const std::string& path);

}  // namespace shapescope
