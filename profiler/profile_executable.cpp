// The `profile` executable.
#include "profiler/profile_cli.hpp"

int main(int argc, char** argv) { return shapescope::profiler::profile_cli(argc, argv); }
