#include "analyze/profile_counters.hpp"

#include <fmt/format.h>

#include "common/kernel_counters.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

std::filesystem::path required_counters_file(const std::string& profile) {
  const std::filesystem::path path = counters_path(profile);
  if (!std::filesystem::exists(path))
    throw UserError(fmt::format("--explain-with-counters: no counters beside {} (expected {}); run profile "
                                "--counters on its anomaly M values, or drop the option",
                                profile, path.string()));
  return path;
}

CountersByM counters_beside(const std::string& profile) { return read_counters_file(required_counters_file(profile)); }

}  // namespace shapescope::analyze
