// The `profile` command line as a function: the executable's main() and the Python
// entry point's C library (capi/) both call it.
#pragma once

namespace shapescope::profiler {

// Parses argv as `profile` does, runs it, returns its exit code (0, 2 for a user error, 130 interrupted).
int profile_cli(int argc, char** argv);

}  // namespace shapescope::profiler
