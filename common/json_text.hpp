// JSON as text for the files we write. Strings from CSV files (kernel and device
// names) or the command line may hold bytes that are not UTF-8; nlohmann::json
// throws on those, so they are written as U+FFFD instead.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace shapescope {

// `value` indented by `indent` spaces, ending with a newline.
inline std::string json_text(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace shapescope
