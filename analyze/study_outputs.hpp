// The study's two output files, with its columns and number format, so the
// scripts that read them keep working:
//   low_utils_<name>.csv   batch,kernel_time,flops,utils        (the anomalies)
//   split_gemm_<name>.csv  batch,kernel_time,row1_batch,row1_time,row2_batch,row2_time
//                          (the anomalies its 2-way split search improves)
// One difference: with no rows the study's pandas writes '""' alone, we write the header.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "analyze/analysis.hpp"

namespace shapescope::analyze {

std::string low_utils_csv(const SeriesAnalysis& analysis);
std::string split_gemm_csv(const SeriesAnalysis& analysis);

// Writes low_utils_<name>.csv, and split_gemm_<name>.csv when `with_split`,
// into `out_dir` (created if needed); returns the paths written.
std::vector<std::filesystem::path> write_study_outputs(const SeriesAnalysis& analysis,
                                                       const std::filesystem::path& out_dir, bool with_split);

}  // namespace shapescope::analyze
