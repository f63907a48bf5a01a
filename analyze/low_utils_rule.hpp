// The study's low-utils rule, exactly as published ("Inconsistency in GEMM
// Performance", github.com/YyWangCS/FairySpeed, gemm/shape_utils_analyze.py,
// analyze_torchgemm_shape_utils). What its code does, which this reproduces:
//  - rows are visited in file order (its files are sorted by batch; ours are
//    sorted by M), starting at the second row; the first is never an anomaly;
//  - the reference is max(utils) over ALL earlier rows, anomalous ones
//    included; ties resolve to the first such row (pandas idxmax);
//  - a row is an anomaly when reference * ratio > utils: strict, evaluated in
//    double precision in exactly that order (multiply, then compare).
#pragma once

#include <vector>

#include "analyze/anomaly.hpp"

namespace shapescope::analyze {

std::vector<Anomaly> low_utils_anomalies(const Series& series, double utils_ratio);

}  // namespace shapescope::analyze
