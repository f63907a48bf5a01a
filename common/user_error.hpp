// An error the user can fix: one line naming the input and the fix. CLIs print
// what() and exit non-zero; nothing else catches it.
#pragma once

#include <stdexcept>
#include <string>

namespace shapescope {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace shapescope
