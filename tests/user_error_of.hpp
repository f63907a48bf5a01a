// What a test asks of a call that should fail the way a user can fix: the UserError's message.
#pragma once

#include <string>

#include "common/user_error.hpp"

namespace shapescope::testing_support {

// The message of the UserError `action` throws, or "" when it throws none.
template <typename Action>
std::string user_error_of(Action action) {
  try {
    action();
  } catch (const UserError& error) {
    return error.what();
  }
  return "";
}

}  // namespace shapescope::testing_support
