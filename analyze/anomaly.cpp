#include "analyze/anomaly.hpp"

#include <fmt/format.h>

#include "analyze/low_utils_rule.hpp"
#include "analyze/noise_aware_rule.hpp"
#include "common/enum_names.hpp"
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

constexpr EnumName<AnomalyRule> kAnomalyRuleNames[] = {
    {AnomalyRule::noise_aware, "noise-aware"},
    {AnomalyRule::study, "study"},
};

std::string to_string(AnomalyRule rule) { return name_of(kAnomalyRuleNames, rule); }

AnomalyRule parse_anomaly_rule(const std::string& name) {
  if (const std::optional<AnomalyRule> rule = value_named(kAnomalyRuleNames, name)) return *rule;
  throw UserError(fmt::format("--rule '{}' is not a rule; use one of: {}", name, names_listed(kAnomalyRuleNames)));
}

}  // namespace shapescope::analyze
