// `profile --verify-capture-sizes report.json`: the capture-size recommendation of
// `analyze --capture-sizes --json` checked by replaying the model's GEMMs. For every
// captured size s that the distribution reaches under the baseline list (vLLM's
// default) or the candidate (the recommended list), one decode step's GEMM sequence
// at M = s (each module once per layer running it, with the kernel the report chose at
// s, each layer its own weights so the L2 cannot carry them from one layer to the
// next) is captured as one graph and replayed with the sweep's stopping rule. The
// result (common/capture_verification.hpp) sets measured T(s) beside the predicted
// T(s) and the measured expected step time of both lists beside the predicted one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/capture_report_file.hpp"
#include "common/capture_verification.hpp"
#include "kernels/kernel.hpp"
#include "profiler/device_lock.hpp"
#include "profiler/measure.hpp"
#include "profiler/sweep_setup.hpp"

namespace shapescope::profiler {

struct VerifyCaptureRequest {
  std::string report_path;
  std::string out_path;                 // "" = the report's path with .verify.json instead of .json
  std::string baseline = "vllm_default";
  std::string candidate;                // "" = the report's recommended list
  MeasureOptions measure;               // timed as graph replays whatever its timing says
  bool programmatic_launch = true;      // --pdl: the profiles' graph timing ran with it on (auto)
  bool warm_up = true;                  // GPU: settle the SM clock first
  uint64_t seed = 1;
  double check_threshold = kernels::kCheckThreshold;
};

// What a replay will run, checked before any work.
struct CaptureReplayPlan {
  CaptureReportFile report;
  std::string baseline, candidate;  // list keys
  std::vector<int64_t> sizes;       // ascending: every size either list serves a weighted batch with
  kernels::BackendKind backend = kernels::BackendKind::cpu;  // where the report's kernels run
  std::vector<std::string> kernels;  // every kernel the sizes run, first-use order
};

// Throws UserError (one line) on a report without the needed fields, a list it lacks, a
// module that is not a dense GEMM per layer (grouped or per-expert experts), a size the
// report gives no T or kernel for, a kernel this binary lacks, or kernels of two backends.
// Call register_all_kernels() first.
CaptureReplayPlan plan_capture_replay(const VerifyCaptureRequest& request);

// Replays every planned size on `device` (of the plan's backend), writes the result to
// request.out_path (atomically) and returns it. Stops between sizes on an interrupt
// (returns with `interrupted` set, writing nothing).
struct CaptureReplayOutcome {
  CaptureVerification verification;
  std::string written_path;
  bool interrupted = false;
};
CaptureReplayOutcome replay_capture_sizes(kernels::Device& device, const CaptureReplayPlan& plan,
                                          const VerifyCaptureRequest& request);

// `profile --verify-capture-sizes`: takes the measurement options, seed, threads and --pdl from
// `profile`, plans (every check before any work), opens the device the report's kernels run
// on, holds it as a sweep does, replays and prints. Returns the exit code (130 when interrupted).
int verify_capture_cli(VerifyCaptureRequest request, const ProfileRequest& profile, const std::string& out_path,
                       BusyPolicy busy, bool warm_up);

}  // namespace shapescope::profiler
