#include "analyze/anomaly.hpp"

#include <fmt/format.h>

#include "analyze/low_utils_rule.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

std::vector<Anomaly> find_anomalies(const Series& series, AnomalyRule rule, const RuleOptions& options) {
  switch (rule) {
    case AnomalyRule::study:
      return low_utils_anomalies(series, options.utils_ratio);
  }
  return {};
}

std::string to_string(AnomalyRule rule) {
  switch (rule) {
    case AnomalyRule::study:
      return "study";
  }
  return "unknown";
}

AnomalyRule parse_anomaly_rule(const std::string& name) {
  if (name == "study") return AnomalyRule::study;
  throw UserError(fmt::format("--rule '{}' is not a rule; use one of: study", name));
}

}  // namespace shapescope::analyze
