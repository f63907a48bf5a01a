// Anomalies: batch sizes whose MFU falls below what smaller batches reached.
// The rule that decides is a choice (AnomalyRule); every rule reports the same
// Anomaly record so plans, outputs and reports do not depend on the rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/series.hpp"

namespace shapescope::analyze {

enum class AnomalyRule {
  study,        // the published low-utils rule, bit-exact (low_utils_rule.hpp)
  noise_aware,  // robust local reference, shortfall beyond noise: the CLI's default (noise_aware_rule.hpp)
};

// The study's bar, which every rule applies by default: an anomaly keeps less than this fraction of the
// reference MFU.
inline constexpr double kStudyUtilsRatio = 0.85;

struct RuleOptions {
  double utils_ratio = kStudyUtilsRatio;
};

struct Anomaly {
  std::size_t index = 0;            // into Series::points
  int64_t m = 0;
  double time_us = 0;
  double utils = 0;
  std::size_t reference_index = 0;  // the smaller batch the rule compared against
  int64_t reference_m = 0;
  double reference_utils = 0;
  // Fraction of the reference MFU lost: 0.15 means 15% below it.
  double drop() const { return reference_utils > 0 ? 1.0 - utils / reference_utils : 0.0; }
};

std::vector<Anomaly> find_anomalies(const Series& series, AnomalyRule rule, const RuleOptions& options);

std::string to_string(AnomalyRule rule);
// Throws UserError listing the valid names.
AnomalyRule parse_anomaly_rule(const std::string& name);

}  // namespace shapescope::analyze
