// Runs grouped GEMM sweeps (`profile --module experts`, `--grouped-preset`): every
// (expert layer, grouped kernel) becomes one profile CSV with the grouped columns and a
// sidecar holding the exact group sizes of every M. The swept M is the batch's tokens;
// routing has already turned each M into rows per local expert when the plan is made, so
// every input error surfaced before any work. Resumes like a dense sweep.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/model_catalog.hpp"
#include "kernels/grouped_gemm.hpp"
#include "profiler/measure.hpp"
#include "profiler/peak.hpp"
#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

struct GroupedPoint {
  int64_t m = 0;               // tokens in the batch (a preset: the rows of all groups)
  uint64_t token_seed = 0;     // the routing draw of this M (0: not routed)
  kernels::GroupedShape shape; // rows per local expert, in the sweep's layout
};

// One grouped GEMM over M: an expert layer on the profiled GPU, or a preset problem.
struct GroupedSeries {
  GemmProblem problem;         // model, module, N, K, experts, top_k, ep, local_experts
  std::string routing;         // "uniform", "lognormal:1.5", "preset:nvfp4_targets"
  std::string routing_label;   // the routing in file names
  std::string layout_label;    // the layout in file names: "contiguous128", "masked", "masked256"
  bool preset = false;         // fixed group sizes (problem.model is the preset, problem.module the problem)
  std::vector<GroupedPoint> points;  // M ascending
};

// The seed also draws the routing popularity; each M's tokens derive from it.
struct GroupedSweepPlan : SweepSettings {
  std::vector<GroupedSeries> series;
  std::vector<std::string> kernels;  // grouped registry names
  nlohmann::json description;        // routing, layout and sizing options, for the sidecars
};

// `<model>_<module>_ep<ep>|tp<tp>_E<local experts>_N<n>_K<k>_<routing>_<layout>_<kernel>[_<timing>].csv`;
// a preset: `<preset>_<problem>_<layout>_<kernel>[_<timing>].csv` (events-timed files carry no suffix).
std::string grouped_file_name(const GroupedSeries& series, const std::string& kernel, kernels::TimingMode timing);

// Per file of a grouped sweep: each measured point's time as a fraction of its speed of light
// (one line per point for a preset, the best and median over M otherwise).
std::string speed_of_light_summary(const SweepResult& result);

// Stops between points when interrupt_requested(), after writing what it has.
SweepResult run_grouped_sweep(kernels::Device& device, const GroupedSweepPlan& plan);

}  // namespace shapescope::profiler
