// Turns what the user asked `profile` for into a device and a SweepPlan:
// backend choice (and why), kernels, model shapes, M values, output folder.
// All validation that can fail on user input happens here, before any work.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <optional>

#include "kernels/kernel.hpp"
#include "profiler/grouped_setup.hpp"
#include "profiler/m_sweep.hpp"
#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

struct ProfileRequest {
  std::string model;
  std::string module = "all";
  int tp = 1;
  std::vector<std::string> shapes;   // --shape N,K[,batch] (repeatable): raw shapes instead of a model's layers
  std::vector<std::string> kernels;  // empty: every kernel of the backend profiled by default
  std::string backend = "auto";      // auto | cpu | cuda | hip
  MSweepSpec m_sweep;                // preset "" = the backend's default (cuda: fairyspeed, cpu: cpu)
  MeasureOptions measure;
  std::string out;                   // "" = profiles/<device-slug>
  std::string peak = "datasheet";    // datasheet | measured
  double peak_tflops = 0;
  int threads = 0;                   // CPU threads, 0 = all cores
  uint64_t seed = 1;
  std::string hf_config;             // a Hugging Face config.json; --model names it
  std::string cut_scale_block = "refuse";  // refuse | allow
  bool progress = false;
  std::string command_line;
  int repeat = 1;                    // passes over the M list (--repeat)
  bool warm_up = true;               // GPU: settle the SM clock before the sweep (--no-warm-up turns it off)
  std::string timing;                // events | graph | kernel; "" = the preset's default
  std::string pdl = "auto";          // auto (on with graph timing) | on | off
  GroupedRequest grouped;            // --ep, --routing, --layout, --align, --max-m, --grouped-preset
  MSearchOptions m_search;           // --m-search, --max-points, --time-budget
  std::string operand_format;        // --operand-format: every layer's block format replaced; "" = the layers' own
};

// The timing a sweep uses unless told: graph for the serving engines' capture sizes
// (decode runs inside CUDA graphs), events for everything else (the study's method).
kernels::TimingMode default_timing(const std::string& m_preset);

// --pdl auto|on|off for a timing mode: auto turns programmatic dependent launch on with graph timing. Throws UserError.
bool programmatic_launch_for(const std::string& pdl, kernels::TimingMode timing);
// The value of an on|off option such as --clock-probes (`option` names it). Throws UserError.
bool parse_on_off(const std::string& option, const std::string& value);

struct SweepSetup {
  std::unique_ptr<kernels::Device> device;
  std::string backend_reason;  // which backend and why, printed before the sweep
  SweepPlan plan;
  std::optional<GroupedSweepPlan> grouped;  // set instead of plan's problems for --module experts / --grouped-preset
};

// Throws UserError, one line naming the option and its range, on a NaN, infinite or out-of-range number.
void check_numeric_options(const ProfileRequest& request);
// --seed: a whole number from 0 to 2^64-1 ("-1" is refused, not wrapped around). Throws UserError.
uint64_t parse_seed(const std::string& text);

// Registers the CPU and (when compiled) CUDA and HIP kernels; idempotent.
void register_all_kernels();
// Throws UserError naming the bad input and the fix.
SweepSetup prepare_sweep(const ProfileRequest& request);

// "NVIDIA H200" -> "nvidia_h200", for the default output folder.
std::string device_slug(const std::string& device_name);

// `profile --list-kernels` and `--list-models` text.
std::string list_kernels_text();
std::string list_models_text();

}  // namespace shapescope::profiler
