#include "analyze/anomaly.hpp"

#include <fmt/format.h>

#include "analyze/low_utils_rule.hpp"
#include "analyze/noise_aware_rule.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

std::vector<Anomaly> find_anomalies(const Series& series, AnomalyRule rule, const RuleOptions& options) {
  switch (rule) {
    case AnomalyRule::study:
      return low_utils_anomalies(series, options.utils_ratio);
    case AnomalyRule::noise_aware: {
      NoiseAwareOptions noise_aware;
      noise_aware.utils_ratio = options.utils_ratio;
      return noise_aware_anomalies(series, noise_aware);
    }
  }
  return {};
}

std::string to_string(AnomalyRule rule) {
  switch (rule) {
    case AnomalyRule::study:
      return "study";
    case AnomalyRule::noise_aware:
      return "noise-aware";
  }
  return "unknown";
}

AnomalyRule parse_anomaly_rule(const std::string& name) {
  if (name == "study") return AnomalyRule::study;
  if (name == "noise-aware") return AnomalyRule::noise_aware;
  throw UserError(fmt::format("--rule '{}' is not a rule; use one of: noise-aware, study", name));
}

}  // namespace shapescope::analyze
