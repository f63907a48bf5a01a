// Plans that fit grouped GEMMs (MoE experts): run the same experts laid out another way
// (another alignment of contiguous rows, masked slots instead of contiguous rows, or the
// reverse), as measured by another profile of the same grouped GEMM given to the same
// `analyze`. Split and pad plans still apply to the token batch; these change the layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/analysis.hpp"
#include "analyze/series.hpp"

namespace shapescope::analyze {

struct LayoutPlan {
  int64_t m = 0;
  std::string from, to;   // layouts: "contiguous:128", "masked", ...
  std::string kind;       // "alignment" (contiguous to contiguous) or "layout" (masked <-> contiguous)
  double time_us = 0;     // measured at M in this series
  double planned_us = 0;  // measured at M in the other layout
  std::string source;     // the profile that measured it
  double gain() const { return time_us > 0 ? 1 - planned_us / time_us : 0; }
};

// Whether two series profile the same grouped GEMM (device, model, module, N, K, kernel,
// routing, EP, experts per GPU) in different layouts.
bool same_grouped_gemm_other_layout(const Series& a, const Series& b);

// For each anomaly of a grouped `series`, the fastest other layout measured at the same M
// among `all`, kept when it beats the measured time x split_ratio. Empty for dense series.
std::vector<LayoutPlan> find_layout_plans(const SeriesAnalysis& analysis, const std::vector<Series>& all,
                                          double split_ratio);

nlohmann::json layout_plans_json(const std::vector<LayoutPlan>& plans);

}  // namespace shapescope::analyze
