// The main of a benchmark whose work is one `run` function: a UserError (a bad option, no GPU) ends it with
// one line on stderr and exit 2, as the CLIs do.
#pragma once

#include "common/cli_errors.hpp"
#include "common/user_error.hpp"

namespace shapescope {

inline int bench_main(const char* tool, int (*run)(int, char**), int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UserError& error) {
    return report_failure(tool, error);
  }
}

}  // namespace shapescope
