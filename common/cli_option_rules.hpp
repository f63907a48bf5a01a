// Rules every option of both CLIs follows, applied to the whole CLI11 app once its options are declared, so an
// option added later follows them too:
//   - a value is never empty: '' (an unset shell variable, say) would otherwise silently mean the default;
//   - a hidden --list-options prints each option with its value type (INT, FLOAT, TEXT; flags FLAG), which the
//     tests walk with values outside every option's domain.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace shapescope {

inline void refuse_empty_values(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& value) { return value.empty() ? std::string("an empty value; give one or drop the option") : ""; },
      "NON-EMPTY");
  // CLI11 reads "-1" into an unsigned option as its largest value and saturates an overflow: refused here.
  const CLI::Validator whole_number(
      [](std::string& value) {
        uint64_t parsed = 0;
        const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
        return error == std::errc() && end == value.data() + value.size()
                   ? std::string()
                   : value + " is not a whole number from 0 to " + std::to_string(UINT64_MAX);
      },
      "WHOLE");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_name().empty()) continue;  // a flag
    if (option->get_type_name() == "UINT") option->check(whole_number);
    option->check(non_empty);
  }
}

// For options whose 0 means "not given": given, the value must be a count of at least 1.
inline CLI::Validator positive_count() {
  return CLI::Validator(
      [](std::string& value) {
        long long parsed = 0;
        return CLI::detail::lexical_cast(value, parsed) && parsed >= 1 ? std::string()
                                                                       : value + " is not a count; give 1 or more";
      },
      "COUNT");
}

// Adds the hidden --list-options; after parsing, `listing()` says whether it was given.
class OptionListing {
 public:
  explicit OptionListing(CLI::App& app) { app.add_flag("--list-options", wanted_)->group(""); }
  bool listing() const { return wanted_; }
  // "--name TYPE" per documented option (hidden ones and --help left out).
  static std::string text(const CLI::App& app) {
    std::string lines;
    for (const CLI::Option* option : app.get_options()) {
      const std::string name = option->get_name();
      if (option->get_group().empty() || name == "--help" || name.rfind("--", 0) != 0) continue;
      const std::string type = option->get_type_name();  // "INT:COUNT:NON-EMPTY": the type, then its checks
      lines += fmt::format("{} {}\n", name, type.empty() ? "FLAG" : type.substr(0, type.find(':')));
    }
    return lines;
  }

 private:
  bool wanted_ = false;
};

}  // namespace shapescope
