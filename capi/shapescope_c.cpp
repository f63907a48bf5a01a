// libshapescope_c: include/shapescope_c.h over the profiler.
#include "include/shapescope_c.h"

#include "common/cli_errors.hpp"
#include "kernels/plugin_kernels.hpp"
#include "profiler/profile_cli.hpp"

extern "C" uint32_t shapescope_c_plugin_abi_version(void) { return SHAPESCOPE_PLUGIN_ABI_VERSION; }

extern "C" int shapescope_c_profile(int argc, char** argv, const shapescope_plugin* plugin, const char* source) {
  try {
    if (plugin) shapescope::kernels::register_in_process_plugin(plugin, source ? source : "in-process table");
  } catch (const std::exception& error) {
    return shapescope::report_failure("profile", error);
  }
  return shapescope::profiler::profile_cli(argc, argv);
}
