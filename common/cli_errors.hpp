// How both CLIs end on an error: one line on stderr — control characters in it
// (a CSV field holding a newline, say) escaped — and exit 2 for anything the
// user can fix (options, inputs, paths), 70 (EX_SOFTWARE) for an internal error, which names itself a bug.
#pragma once

#include <exception>
#include <string>
#include <string_view>

namespace shapescope {

inline constexpr int kExitUserError = 2;
inline constexpr int kExitInternalError = 70;

// `text` on one line: \n, \r and \t written as those escapes, other control bytes as \xNN.
std::string one_line(std::string_view text);

// Prints "<tool>: <what went wrong>" and returns the exit code: kExitUserError for a UserError or a
// file-system error (a path too long, a folder where a file goes), else kExitInternalError.
int report_failure(std::string_view tool, const std::exception& error);

}  // namespace shapescope
