// The GEMM time of one token step of a model at batch M, from its modules' profiles:
// T(M) = sum over modules of (decoder layers running the module) x (its time at M).
// Profiles are shapescope CSVs whose sidecars name model, module and TP; several
// kernels' profiles of one module give the fastest kernel at each M. T is defined only
// on the M every module measured (no interpolation): that set is the grid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/series.hpp"
#include "common/model_catalog.hpp"

namespace shapescope::analyze {

enum class ModuleCostModel {
  dense,       // one GEMM over the step's M tokens
  grouped,     // a grouped profile of an expert module (sidecar problem.grouped): M is the step's tokens,
               // the time one launch over every routed expert
  per_expert,  // one expert's GEMM profile: the expected experts with routed tokens under uniform
               // routing, each at its expected rows (nearest whole row, up to the next profiled M)
};

std::string to_string(ModuleCostModel model);

// One module at one grid M.
struct ModulePoint {
  double time_us = 0;         // the module in one layer
  std::string kernel;         // registry name of the fastest profile
  std::string kernel_name;    // what that profile ran
  int64_t profiled_m = 0;     // the profiled M whose time is used (per_expert: rows per expert, rounded)
  double active_experts = 0;  // per_expert: expected experts with routed tokens; 0 otherwise
};

struct ModuleTerm {
  GemmProblem problem;                 // the shape at the TP degree (model catalog)
  int64_t layers = 0;                  // decoder layers that run it
  ModuleCostModel cost_model = ModuleCostModel::dense;
  std::vector<const Series*> profiles; // the kernels given for it
  std::vector<ModulePoint> points;     // parallel to StepTimeModel::grid
};

struct StepTimeModel {
  std::string model, device;
  int tp = 0;
  int ep = 1;                         // the routed experts' expert-parallel degree (grouped EP profiles), else 1
  std::vector<int64_t> grid;          // the M every module measured, ascending
  std::vector<double> step_us;        // T at each grid M
  std::vector<ModuleTerm> modules;    // catalog order
  std::vector<std::string> excluded;  // modules the user left out of the step
  std::vector<std::string> notes;     // what was assumed or left out, one line each
};

// The model the profiles measured, after checking each has a sidecar naming model, module
// and TP and that all share one model, TP degree and device. Grouped expert profiles under
// expert parallelism (EP > 1: whole experts per GPU, profiled at their own TP) join any TP
// degree: attention and dense layers at TP, experts at EP, as one decode step runs them.
// Throws UserError otherwise.
const std::string& profiled_model(const std::vector<Series>& profiles);

// Throws UserError (one line) on profiles without sidecars, of different models, TP
// degrees, EP degrees or devices, of modules the model lacks or with shapes the catalog
// disagrees with, on modules of the model missing from the profiles (named), and on an
// empty grid.
StepTimeModel build_step_time_model(const ModelSpec& spec, const std::vector<Series>& profiles,
                                    const std::vector<std::string>& excluded_modules);

}  // namespace shapescope::analyze
