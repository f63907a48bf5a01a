#include "analyze/synthetic_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include <fmt/format.h>

#include "common/enum_names.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

constexpr int64_t kN = 14336, kK = 4096;  // llama3_8b gate_up_proj at TP2, as the study swept it
constexpr double kPeakTflops = 989.4;     // H200 dense fp16 datasheet peak
constexpr std::size_t kShoulder = 3;      // batches on either side of a single-batch cliff that dip with it
constexpr std::size_t kKernelBlock = 500; // batches between the library's harmless kernel changes, on average

// Our own draws from the engine (whose output the standard fixes), so a seed means one series everywhere.
class Draws {
 public:
  explicit Draws(uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  std::size_t integer(std::size_t low, std::size_t high) {  // [low, high]
    return low + static_cast<std::size_t>(uniform() * static_cast<double>(high - low + 1));
  }
  double normal() {  // Box-Muller
    const double radius = std::sqrt(-2 * std::log(1 - uniform()));
    return radius * std::cos(2 * std::numbers::pi * uniform());
  }

 private:
  std::mt19937_64 engine_;
};

std::size_t full_depth_length(CliffKind kind, Draws& draws) {
  switch (kind) {
    case CliffKind::single_batch:
      return 1;
    case CliffKind::multi_batch:
      return draws.integer(2, 8);
    case CliffKind::kernel_switch:
      return draws.integer(16, 96);
  }
  return 1;
}

// Where flags count as hits rather than false alarms, relative to the full-depth batches.
std::size_t margin(CliffKind kind) { return kind == CliffKind::single_batch ? kShoulder : 1; }

}  // namespace

constexpr EnumName<CliffKind> kCliffKindNames[] = {
    {CliffKind::single_batch, "single-batch"},
    {CliffKind::multi_batch, "multi-batch"},
    {CliffKind::kernel_switch, "kernel-switch"},
};

std::string to_string(CliffKind kind) { return name_of(kCliffKindNames, kind); }

SyntheticSweep synthetic_sweep(const SweepSpec& spec) {
  if (!(spec.scatter >= 0) || !(spec.ar1 >= 0 && spec.ar1 < 1) || !(spec.outlier_rate >= 0 && spec.outlier_rate <= 1)) {
    throw UserError(fmt::format("synthetic sweep: scatter {} must be >= 0, ar1 {} in [0, 1), outlier rate {} in [0, 1]",
                                spec.scatter, spec.ar1, spec.outlier_rate));
  }
  // Two streams: the same seed gives the same noise with or without cliffs.
  Draws draws(spec.seed), placement(spec.seed ^ 0x9e3779b97f4a7c15ULL);
  const std::size_t n = spec.batches;

  // Cliff lengths first, then the free batches shared out at random between the gaps.
  SyntheticSweep sweep;
  std::size_t occupied = 0;
  for (const CliffRequest& request : spec.cliffs) {
    InjectedCliff cliff;
    cliff.kind = request.kind;
    cliff.depth = request.depth;
    cliff.count = full_depth_length(request.kind, placement);
    occupied += cliff.count + 2 * margin(request.kind) + kCliffGap;
    sweep.cliffs.push_back(cliff);
  }
  if (kFirstCliffBatch + occupied > n) {
    throw UserError(fmt::format("synthetic sweep: {} cliffs need {} batches, the sweep has {}; ask for fewer cliffs "
                                "or more batches",
                                spec.cliffs.size(), kFirstCliffBatch + occupied, n));
  }
  for (std::size_t i = sweep.cliffs.size(); i > 1; --i) {
    std::swap(sweep.cliffs[i - 1], sweep.cliffs[placement.integer(0, i - 1)]);
  }
  const std::size_t spare = n - kFirstCliffBatch - occupied;
  std::vector<std::size_t> cuts;
  for (std::size_t i = 0; i < sweep.cliffs.size(); ++i) cuts.push_back(placement.integer(0, spare));
  std::sort(cuts.begin(), cuts.end());
  std::size_t next_free = kFirstCliffBatch, previous_cut = 0;
  for (std::size_t i = 0; i < sweep.cliffs.size(); ++i) {
    InjectedCliff& cliff = sweep.cliffs[i];
    next_free += cuts[i] - previous_cut;
    previous_cut = cuts[i];
    cliff.first_touched = next_free;
    cliff.first = next_free + margin(cliff.kind);
    cliff.last_touched = cliff.first + cliff.count - 1 + margin(cliff.kind);
    next_free = cliff.last_touched + 1 + kCliffGap;
  }

  Series& series = sweep.series;
  series.name = fmt::format("synthetic ±{:g}% seed {}", 100 * spec.scatter, spec.seed);
  series.format = "synthetic";
  series.n = kN;
  series.k = kK;
  series.peak_tflops = kPeakTflops;
  const double sigma = spec.scatter / 1.959964;
  const double phases[3] = {draws.uniform(0, 2 * std::numbers::pi), draws.uniform(0, 2 * std::numbers::pi),
                            draws.uniform(0, 2 * std::numbers::pi)};
  const std::size_t kernel_offset = draws.integer(0, kKernelBlock - 1);
  double correlated = draws.normal();
  for (std::size_t i = 0; i < n; ++i) {
    const double t = n > 1 ? static_cast<double>(i) / static_cast<double>(n - 1) : 0;
    SeriesPoint point;
    point.m = 16 + 4 * static_cast<int64_t>(i);
    const double m = static_cast<double>(point.m);
    const double level = 0.8 * m / (m + 200);
    const double waves = 0.5 * std::sin(2 * std::numbers::pi * 2.3 * t + phases[0]) +
                         0.3 * std::sin(2 * std::numbers::pi * 5.7 * t + phases[1]) +
                         0.2 * std::sin(2 * std::numbers::pi * 13.1 * t + phases[2]);
    const double clock = 1 - spec.drift * t + 0.5 * spec.drift * waves;
    const double local_sigma = sigma * std::exp(std::log(4.0 / 3.0) + std::log(9.0 / 16.0) * t);
    sweep.scatter.push_back(1.959964 * local_sigma);
    if (i > 0) correlated = spec.ar1 * correlated + std::sqrt(1 - spec.ar1 * spec.ar1) * draws.normal();
    double noise = local_sigma * correlated;
    // Drawn for every batch, so a sweep without outliers has the same noise otherwise.
    const bool outlier = draws.uniform() < spec.outlier_rate;
    const double size = draws.uniform(2, 4) * local_sigma;
    const bool slow = draws.uniform() < 0.75;
    if (outlier) noise += slow ? -size : size;
    point.utils = level * clock * std::max(1 + noise, 0.05);
    point.kernel_name = fmt::format("gemm_tile_{}", (i + kernel_offset) / kKernelBlock);
    series.points.push_back(point);
  }

  for (std::size_t c = 0; c < sweep.cliffs.size(); ++c) {
    const InjectedCliff& cliff = sweep.cliffs[c];
    for (std::size_t i = cliff.first; i < cliff.first + cliff.count; ++i) {
      series.points[i].utils *= 1 - cliff.depth;
      if (cliff.kind == CliffKind::kernel_switch) series.points[i].kernel_name = fmt::format("gemm_slow_{}", c);
    }
    if (cliff.kind != CliffKind::single_batch) continue;
    for (std::size_t offset = 1; offset <= kShoulder; ++offset) {
      series.points[cliff.first - offset].utils *= 1 - cliff.depth * placement.uniform(0.1, 0.4);
      series.points[cliff.first + offset].utils *= 1 - cliff.depth * placement.uniform(0.1, 0.4);
    }
  }
  for (SeriesPoint& point : series.points) {
    point.tflops = point.utils * kPeakTflops;
    point.time_us = 2.0 * static_cast<double>(point.m) * kN * kK / (point.tflops * 1e6);
  }
  return sweep;
}

}  // namespace shapescope::analyze
