// Helpers shared by the analyze tests: the repository's data folder, scratch
// files, and small synthetic series.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analyze/anomaly.hpp"
#include "analyze/series.hpp"
#include "test_data.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope::analyze::testing {

inline std::filesystem::path data() { return testing_data::data_dir(); }

inline std::filesystem::path fairyspeed(const std::string& file) { return data() / "fairyspeed" / file; }

inline const char* kRtx4090Torch251 =
    "torchgemm_NVIDIA_GeForce_RTX_4090_torch_2.5.1+cu124_K4096_N14336_dtypefloat16.csv";

inline std::vector<std::string> study_profiles() {
  return {kRtx4090Torch251,
          "torchgemm_NVIDIA_GeForce_RTX_4090_torch_2.3.0+cu121_K4096_N14336_dtypefloat16.csv",
          "torchgemm_NVIDIA_A800_80GB_PCIe_torch_2.5.1+cu124_K4096_N4096_float16.csv",
          "torchgemm_NVIDIA_A800_80GB_PCIe_torch_2.5.1+cu124_K4096_N4096_bfloat16.csv",
          "torchgemm_NVIDIA_A800_80GB_PCIe_torch_2.5.1+cu124_K4096_N28672_dtypefloat16.csv",
          "Marlin_NVIDIA_A800_80GB_PCIe_vllm_0.6.5_K4096_N28672_dtype_gptq_int8.csv"};
}

using shapescope::testing_support::ScratchDir;

// A sorted, unique series from (M, time) pairs; MFU follows from the time for
// a fixed shape, so a slower-than-expected M is also a lower-MFU M.
inline Series make_series(const std::vector<std::pair<int64_t, double>>& points, double peak_tflops = 100) {
  Series series;
  series.name = "synthetic";
  series.source = "synthetic.csv";
  series.format = "study";
  series.n = 4096;
  series.k = 4096;
  series.peak_tflops = peak_tflops;
  for (const auto& [m, time_us] : points) {
    SeriesPoint point;
    point.m = m;
    point.time_us = time_us;
    point.tflops = 2.0 * static_cast<double>(m) * 4096 * 4096 / (time_us * 1e6);
    point.utils = point.tflops / peak_tflops;
    series.points.push_back(point);
  }
  return series;
}

// Point `index` of `series` as an anomaly against the smaller point `reference_index`, with their M and MFU.
// M = first, first + step, …, last of one kernel at MFU 1 (M µs each), N = 128, K = 4096; no SM count,
// spread or clock recorded.
inline Series flat_series(int64_t first, int64_t last, int64_t step, const std::string& kernel) {
  Series series;
  series.name = "flat";
  series.n = 128;
  series.k = 4096;
  for (int64_t m = first; m <= last; m += step) {
    SeriesPoint point;
    point.m = m;
    point.kernel_name = kernel;
    point.time_us = static_cast<double>(m);
    point.utils = 1;
    series.points.push_back(point);
  }
  return series;
}

inline Anomaly anomaly_against(const Series& series, std::size_t index, std::size_t reference_index) {
  Anomaly anomaly;
  anomaly.index = index;
  anomaly.m = series.points[index].m;
  anomaly.utils = series.points[index].utils;
  anomaly.reference_index = reference_index;
  anomaly.reference_m = series.points[reference_index].m;
  anomaly.reference_utils = series.points[reference_index].utils;
  return anomaly;
}

// A shapescope profile of one kernel over M = 1000 … 1400 step 20 with tight samples (±0.5%), where M = 1200 and
// 1220 run 25% slower: `extra_columns` (",a,b") are added to the header and `extra_values(dip)` (",x,y") to each
// row, so a test can say what the profile records of the dip.
inline std::string dip_profile(const std::string& extra_columns, const std::function<std::string(bool)>& extra_values) {
  std::string text =
      "batch,kernel_time,flops,utils,kernel_name,m,n,k,kernel,device,status,time_us_min,time_us_max" + extra_columns + "\n";
  for (int64_t m = 1000; m <= 1400; m += 20) {
    const bool dip = m == 1200 || m == 1220;
    const double time = static_cast<double>(m) * (dip ? 1.25 : 1.0);
    text += fmt::format("{},{},{},{},gemm,{},4096,4096,gemm,Fake GPU,ok,{},{}", m, time, 0.5 * m / time,
                        0.5 * m / time, m, 0.995 * time, 1.005 * time) +
            extra_values(dip) + "\n";
  }
  return text;
}

}  // namespace shapescope::analyze::testing
