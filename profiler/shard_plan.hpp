// Cutting a sweep's (kernel, shape, M) points into N shards of about equal predicted cost.
// Pure and deterministic: every process of a sharded run (MPI ranks, Slurm array tasks, GPU
// workers) computes the same assignment from the same plan, so no coordinator is needed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/model_catalog.hpp"

namespace shapescope::profiler {

// What one point of the sweep is predicted to cost, from the device's rates.
struct CostRates {
  double peak_tflops = 0;        // the kernel dtype's tensor rate
  double bandwidth_tb_per_s = 0; // memory bandwidth
};

// The rates of `device_name` for `dtype` from the datasheet table (common/device_peaks); devices the table
// does not know (the CPU) get fixed rates whose ratio keeps FLOPs and bytes comparable.
CostRates cost_rates(const std::string& device_name, const std::string& dtype);

// Predicted seconds of measuring one point: a fixed per-point cost (check against the reference,
// warm-up, sampling loop overhead) plus the roofline time of one run, max(FLOPs/peak, bytes/bandwidth),
// times the runs a point takes. Only ratios matter for balancing.
double point_cost_seconds(const GemmProblem& problem, const std::string& dtype, int64_t m, const CostRates& rates);

struct SweepPoint {
  std::string file;  // the profile CSV's file name
  int64_t m = 0;
  double cost = 0;   // point_cost_seconds
};

// The shard (0..shards-1) of each point, in the order given. Longest predicted cost first, each to the
// least-loaded shard (ties: the lower index; equal costs: by file, then M), so every point is in exactly
// one shard and the costliest shard exceeds total/shards by at most the costliest single point.
std::vector<int> assign_shards(const std::vector<SweepPoint>& points, int shards);

// The M values of each file that shard `index` of `shards` measures (files without any are left out).
std::map<std::string, std::vector<int64_t>> shard_m_values(const std::vector<SweepPoint>& points, int shards, int index);

}  // namespace shapescope::profiler
