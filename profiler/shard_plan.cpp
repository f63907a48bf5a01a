#include "profiler/shard_plan.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "common/device_peaks.hpp"

namespace shapescope::profiler {

namespace {

// Devices outside the datasheet table (the CPU backend): about a 2-core machine's sgemm rate and
// memory bandwidth, so a point's cost still grows with both its FLOPs and its bytes.
constexpr double kFallbackTflops = 0.05;
constexpr double kFallbackTbPerS = 0.02;
// Per-point seconds outside the timed runs: the H200 sweep of 2026-11-23 at build 32932b5 (4140
// points, cudagraph preset, every kernel) took 14.3 s on one GPU with a median overhead (wall - timed) of 2.26 ms
// a point.
constexpr double kPointOverheadSeconds = 0.0025;

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

double point_cost_seconds(const GemmProblem& problem, const std::string& dtype, int64_t m, const CostRates& rates,
                          const MeasureOptions& sampling) {
  const double batch = double(std::max<int64_t>(1, problem.batch_count));
  const double mm = double(m), n = double(problem.n), k = double(problem.k);
  const double flops = 2 * mm * n * k * batch;
  const auto [a_bytes, b_bytes] = operand_bytes(dtype);
  const double bytes = batch * (mm * k * a_bytes + n * k * b_bytes + mm * n * 2);
  const double run_seconds = std::max(flops / (rates.peak_tflops * 1e12), bytes / (rates.bandwidth_tb_per_s * 1e12));
  const double runs = std::max(0, sampling.warmup_runs) + std::max(1, sampling.min_samples);
  return kPointOverheadSeconds + runs * run_seconds;
}

std::vector<double> even_shares(int shards) {
  if (shards < 1) throw std::invalid_argument("even_shares: shards must be at least 1");
  return std::vector<double>(std::size_t(shards), 1.0 / shards);
}

std::vector<double> work_queue_shares(int workers) {
  if (workers < 1) throw std::invalid_argument("work_queue_shares: workers must be at least 1");
  const double floor = 1.0 / (kQueueTailPerWorker * workers);
  std::vector<double> shares;
  double left = 1;
  while (left > 1e-9) {  // not a rounding remnant
    const double share = std::min(left, std::max(left / (2 * workers), floor));
    shares.push_back(share);
    left -= share;
  }
  return shares;
}

std::vector<int> cut_shards(const std::vector<SweepPoint>& points, const std::vector<double>& shares) {
  if (shares.empty()) throw std::invalid_argument("cut_shards: no shares");
  double total = 0;
  for (const SweepPoint& point : points) total += point.cost;
  const double share_sum = std::accumulate(shares.begin(), shares.end(), 0.0);
  std::vector<double> ends;  // where each shard's share ends in the running total
  double end = 0;
  for (double share : shares) ends.push_back((end += share) / share_sum * total);
  std::vector<int> shard_of;
  shard_of.reserve(points.size());
  double running = 0;
  std::size_t shard = 0;
  for (const SweepPoint& point : points) {
    const double midpoint = running + point.cost / 2;
    while (shard + 1 < ends.size() && midpoint >= ends[shard]) ++shard;
    shard_of.push_back(int(shard));
    running += point.cost;
  }
  return shard_of;
}

std::map<std::string, std::vector<int64_t>> shard_m_values(const std::vector<SweepPoint>& points,
                                                           const std::vector<double>& shares, int index) {
  const std::vector<int> shard_of = cut_shards(points, shares);
  std::map<std::string, std::vector<int64_t>> selected;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (shard_of[i] == index) selected[points[i].file].push_back(points[i].m);
  for (auto& [file, m_values] : selected) std::sort(m_values.begin(), m_values.end());
  return selected;
}

}  // namespace shapescope::profiler
