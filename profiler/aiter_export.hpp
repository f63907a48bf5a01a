// profile --format aiter: a run's profile rows also written as AMD AITER's tuned-GEMM CSV
// (gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio), one table per
// kernel beside the profiles, so `analyze --compare` and AITER's tuning scripts read them next to
// AITER's own tables (analyze/read_aiter_csv.cpp reads this format).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/profile_schema.hpp"
#include "kernels/kernel.hpp"

namespace shapescope::profiler {

// The gfx column: the architecture where the device name holds one ("AMD Instinct MI300X (gfx942)"
// gives gfx942, as AITER writes it), else the device name (an NVIDIA GPU's, which the peak table knows).
std::string aiter_device_column(const std::string& device_name);

// AITER's columns for the ok rows (failed points have no tuned entry), ordered by N, K, M.
// libtype is the shapescope kernel; kernelId numbers its launch names in first-seen order;
// splitK is the launch name's "splitkS" (0 without); bw is GB/s; errRatio is shapescope's
// rel_err against the float64 reference (AITER's is a mismatch fraction: both 0 when exact).
std::string aiter_table(const std::vector<ProfileRow>& rows, int compute_units);

// Writes `<out_dir>/<kernel>.aiter_tuned_gemm.csv` for each kernel of `profiles` (profile CSVs
// of one run); returns the tables written.
std::vector<std::filesystem::path> write_aiter_tables(const std::vector<std::filesystem::path>& profiles,
                                                      const kernels::DeviceInfo& device,
                                                      const std::filesystem::path& out_dir);

}  // namespace shapescope::profiler
