// A capture-size recommendation as `analyze --capture-sizes --json` writes it
// (analyze/capture_report.cpp), read back by `profile --verify-capture-sizes`: the
// model's modules with their layers and the kernel chosen at each grid M, the
// predicted step time T(M), every list and, for every weighted batch, the size each
// list serves it with. Only what a GPU replay needs is read; other keys are ignored.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace shapescope {

struct CaptureReportModule {
  std::string module;
  int64_t n = 0, k = 0, batch_count = 1;
  int64_t layers = 0;                       // decoder layers running it per step
  std::string cost_model;                   // dense | grouped | per_expert
  std::map<int64_t, std::string> kernel_at;  // grid M -> registry name of the fastest profile
};

struct CaptureReportList {
  std::string key, label;
  std::vector<int64_t> sizes;  // ascending, on the grid
  double expected_step_us = 0;
};

struct CaptureReportBatch {
  int64_t batch = 0;
  double weight = 0;                     // share of the total weight
  std::map<std::string, int64_t> served;  // list key -> captured size the batch is padded to
};

struct CaptureReportFile {
  std::string path, model, device;
  int tp = 0;
  std::map<int64_t, double> step_us;  // grid M -> predicted T(M)
  std::vector<CaptureReportModule> modules;
  std::vector<CaptureReportList> lists;
  std::string recommended;            // key of the list to deploy
  std::vector<CaptureReportBatch> batches;

  // Throws UserError naming the file and the key when no list has it.
  const CaptureReportList& list(const std::string& key) const;
};

// Throws UserError (one line naming the file, the missing or mistyped field and the fix)
// when the file is not such a report.
CaptureReportFile read_capture_report(const std::string& path);

}  // namespace shapescope
