/* libshapescope_c: the `profile` command as a C function, for callers that are not C++ (the Python entry point
 * python/shapescope loads it with ctypes, so no module is compiled against the user's Python). */
#ifndef SHAPESCOPE_C_H
#define SHAPESCOPE_C_H

#include "shapescope_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SHAPESCOPE_PLUGIN_ABI_VERSION of this library: callers building tables check it first. */
uint32_t shapescope_c_plugin_abi_version(void);

/* Registers `plugin` (a table in this process, may be NULL; `source` names it in sidecars and errors), then runs
 * `profile` with argv[0..argc) (argv[0] is the program name) and returns its exit code: 0, 2 for a user error
 * (one line on stderr), 130 when interrupted. A kernel name registered by an earlier call is replaced. */
int shapescope_c_profile(int argc, char** argv, const shapescope_plugin* plugin, const char* source);

#ifdef __cplusplus
}
#endif

#endif /* SHAPESCOPE_C_H */
