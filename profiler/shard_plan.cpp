#include "profiler/shard_plan.hpp"

#include <algorithm>
#include <numeric>
#include <queue>
#include <stdexcept>

#include "common/device_peaks.hpp"

namespace shapescope::profiler {

namespace {

// Devices outside the datasheet table (the CPU backend): about a 2-core machine's sgemm rate and
// memory bandwidth, so a point's cost still grows with both its FLOPs and its bytes.
constexpr double kFallbackTflops = 0.05;
constexpr double kFallbackTbPerS = 0.02;
// Fixed seconds per point and the runs it takes (warm-up + samples), relative units for balancing:
// small-M points cost the fixed part, large-M points their FLOPs and bytes.
constexpr double kPointFixedSeconds = 0.02;
constexpr double kRunsPerPoint = 20;

// Bytes per element of A and B for the kernel's dtype (the output is bf16).
std::pair<double, double> operand_bytes(const std::string& dtype) {
  if (dtype == "fp8") return {1, 1};
  if (dtype == "a16w8") return {2, 1};
  return {2, 2};
}

}  // namespace

CostRates cost_rates(const std::string& device_name, const std::string& dtype) {
  CostRates rates{kFallbackTflops, kFallbackTbPerS};
  const std::optional<DevicePeak> peak = find_device_peak(device_name);
  const std::optional<double> tflops = peak_tflops(device_name, dtype);
  if (tflops && *tflops > 0) rates.peak_tflops = *tflops;
  if (peak && peak->memory_tb_per_s > 0) rates.bandwidth_tb_per_s = peak->memory_tb_per_s;
  return rates;
}

double point_cost_seconds(const GemmProblem& problem, const std::string& dtype, int64_t m, const CostRates& rates) {
  const double batch = double(std::max<int64_t>(1, problem.batch_count));
  const double mm = double(m), n = double(problem.n), k = double(problem.k);
  const double flops = 2 * mm * n * k * batch;
  const auto [a_bytes, b_bytes] = operand_bytes(dtype);
  const double bytes = batch * (mm * k * a_bytes + n * k * b_bytes + mm * n * 2);
  const double run_seconds = std::max(flops / (rates.peak_tflops * 1e12), bytes / (rates.bandwidth_tb_per_s * 1e12));
  return kPointFixedSeconds + kRunsPerPoint * run_seconds;
}

std::vector<int> assign_shards(const std::vector<SweepPoint>& points, int shards) {
  if (shards < 1) throw std::invalid_argument("assign_shards: shards must be at least 1");
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const SweepPoint &x = points[a], &y = points[b];
    if (x.cost != y.cost) return x.cost > y.cost;
    if (x.file != y.file) return x.file < y.file;
    return x.m < y.m;
  });
  using Load = std::pair<double, int>;  // (predicted seconds, shard): the least loaded, then the lowest index
  std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
  for (int shard = 0; shard < shards; ++shard) loads.push({0.0, shard});
  std::vector<int> shard_of(points.size(), 0);
  for (std::size_t index : order) {
    auto [load, shard] = loads.top();
    loads.pop();
    shard_of[index] = shard;
    loads.push({load + points[index].cost, shard});
  }
  return shard_of;
}

std::map<std::string, std::vector<int64_t>> shard_m_values(const std::vector<SweepPoint>& points, int shards, int index) {
  const std::vector<int> shard_of = assign_shards(points, shards);
  std::map<std::string, std::vector<int64_t>> selected;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (shard_of[i] == index) selected[points[i].file].push_back(points[i].m);
  for (auto& [file, m_values] : selected) std::sort(m_values.begin(), m_values.end());
  return selected;
}

}  // namespace shapescope::profiler
