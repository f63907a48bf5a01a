// Cutting a sweep's (kernel, shape, M) points into shards. Pure and deterministic: every process of a
// sharded run (MPI ranks, Slurm array tasks, GPU workers) computes the same cut from the same plan, so no
// coordinator is needed. Shards are contiguous runs of the sweep order (file by file, M ascending): a file's
// setup (its weights, graph timing's operand sets) is paid once per shard holding it, so a cut that spread
// every file over every shard paid it shards-times over.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/model_catalog.hpp"
#include "profiler/measure.hpp"

namespace shapescope::profiler {

// What one point of the sweep is predicted to cost, from the device's rates.
struct CostRates {
  double peak_tflops = 0;        // the kernel dtype's tensor rate
  double bandwidth_tb_per_s = 0; // memory bandwidth
};

// The rates of `device_name` for `dtype` from the datasheet table (common/device_peaks); devices the table
// does not know (the CPU) get fixed rates whose ratio keeps FLOPs and bytes comparable.
CostRates cost_rates(const std::string& device_name, const std::string& dtype);

// Predicted seconds of measuring one point: the per-point overhead outside the timed runs (preparing the
// operands, the check against the reference, graph capture: 97% of a sweep's wall time on an H200) plus the
// runs the stopping rule takes at least (`sampling`: warm-up + min samples), each the roofline time
// max(FLOPs/peak, bytes/bandwidth).
double point_cost_seconds(const GemmProblem& problem, const std::string& dtype, int64_t m, const CostRates& rates,
                          const MeasureOptions& sampling);

struct SweepPoint {
  std::string file;  // the profile CSV's file name
  int64_t m = 0;
  double cost = 0;   // point_cost_seconds
};

// N equal shares: a static cut, one shard per process (--shard I/N).
std::vector<double> even_shares(int shards);
// The shares of a work queue for `workers` processes that each take the next unclaimed shard: each shard
// gets 1/(2 x workers) of the predicted cost still left, down to a floor of 1/(kQueueTailPerWorker x
// workers), so shards shrink as the queue drains and the workers finish within about one small shard of
// each other, however wrong the prediction or however unequal the devices.
inline constexpr int kQueueTailPerWorker = 32;
std::vector<double> work_queue_shares(int workers);

// The shard (0..shares.size()-1) of each point, `points` in sweep order: consecutive runs, shard i holding
// the points whose cost midpoint falls in its share of the running total. Every point is in exactly one
// shard, and each shard's cost is its share of the total within the costliest single point.
std::vector<int> cut_shards(const std::vector<SweepPoint>& points, const std::vector<double>& shares);

// The M values of each file that shard `index` of the cut measures (files without any are left out).
std::map<std::string, std::vector<int64_t>> shard_m_values(const std::vector<SweepPoint>& points,
                                                           const std::vector<double>& shares, int index);

}  // namespace shapescope::profiler
