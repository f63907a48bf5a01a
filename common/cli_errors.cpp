#include "common/cli_errors.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

std::string one_line(std::string_view text) {
  std::string line;
  line.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '\n': line += "\\n"; break;
      case '\r': line += "\\r"; break;
      case '\t': line += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          line += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          line += c;
        }
    }
  }
  return line;
}

int report_failure(std::string_view tool, const std::exception& error) {
  std::string message;
  int code = kExitUserError;
  if (dynamic_cast<const UserError*>(&error) != nullptr) {
    message = error.what();
  } else if (const auto* file_error = dynamic_cast<const std::filesystem::filesystem_error*>(&error)) {
    message = fmt::format("{}: {}; check the path", file_error->path1().string(), file_error->code().message());
  } else {
    message = fmt::format("internal error (a bug in shapescope; please report it with the command line): {}", error.what());
    code = kExitInternalError;
  }
  fmt::print(stderr, "{}: {}\n", tool, one_line(message));
  return code;
}

}  // namespace shapescope
