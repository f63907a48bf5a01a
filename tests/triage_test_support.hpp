// Helpers for the triage tests (noise-aware rule, stability, explain, outputs):
// the repository's data files and synthetic series with controlled noise.
#pragma once

#include <cstdint>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analyze/series.hpp"
#include "test_data.hpp"

namespace shapescope::analyze::triage_testing {

inline std::filesystem::path data_file(const std::string& relative) { return testing_data::data_dir() / relative; }

inline const char* kTwoPassH200 = "h200/study_method_twice_fp16_K4096_N14336.csv";
inline const char* kRtx4090Torch251 =
    "fairyspeed/torchgemm_NVIDIA_GeForce_RTX_4090_torch_2.5.1+cu124_K4096_N14336_dtypefloat16.csv";
inline const char* kRtx4090Torch230 =
    "fairyspeed/torchgemm_NVIDIA_GeForce_RTX_4090_torch_2.3.0+cu121_K4096_N14336_dtypefloat16.csv";

// MFU `level(i)` at M = 16, 32, …, with relative Gaussian noise of `noise`
// (fixed seed, so every run sees the same series). Time follows from MFU.
template <typename Level>
Series noisy_series(std::size_t count, double noise, Level level, unsigned seed = 7) {
  std::mt19937 generator(seed);
  std::normal_distribution<double> jitter(0.0, noise);
  Series series;
  series.name = "synthetic";
  series.n = 4096;
  series.k = 4096;
  series.peak_tflops = 100;
  for (std::size_t i = 0; i < count; ++i) {
    SeriesPoint point;
    point.m = static_cast<int64_t>(16 * (i + 1));
    point.utils = level(i) * (1 + jitter(generator));
    point.tflops = point.utils * series.peak_tflops;
    point.time_us = 2.0 * static_cast<double>(point.m) * 4096 * 4096 / (point.tflops * 1e6);
    series.points.push_back(point);
  }
  return series;
}

// Scales MFU (and time inversely) of points [first, first + count) by `factor`.
inline void inject_step(Series& series, std::size_t first, std::size_t count, double factor) {
  for (std::size_t i = first; i < first + count && i < series.points.size(); ++i) {
    series.points[i].utils *= factor;
    series.points[i].tflops *= factor;
    series.points[i].time_us /= factor;
  }
}

template <typename Findings>
std::set<int64_t> flagged_ms(const Findings& findings) {
  std::set<int64_t> ms;
  for (const auto& finding : findings) ms.insert(finding.m);
  return ms;
}

}  // namespace shapescope::analyze::triage_testing
