// An enum's names as one table, read both ways: to_string looks a value's name up, the parsers of
// command-line options and files look a name's value up, and messages list the names in table order.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace shapescope {

template <typename Enum>
struct EnumName {
  Enum value;
  const char* name;
};

// `value`'s name; "unknown" for a value the table lacks (an integer cast to the enum).
template <typename Enum, std::size_t kCount>
std::string name_of(const EnumName<Enum> (&names)[kCount], Enum value) {
  for (const EnumName<Enum>& entry : names)
    if (entry.value == value) return entry.name;
  return "unknown";
}

// The value named `text`; nullopt when no name matches.
template <typename Enum, std::size_t kCount>
std::optional<Enum> value_named(const EnumName<Enum> (&names)[kCount], std::string_view text) {
  for (const EnumName<Enum>& entry : names)
    if (text == entry.name) return entry.value;
  return std::nullopt;
}

// "a, b, c" (or "a, b or c" with last_separator " or "): the names in table order, for messages.
template <typename Enum, std::size_t kCount>
std::string names_listed(const EnumName<Enum> (&names)[kCount], std::string_view last_separator = ", ") {
  std::string text;
  for (std::size_t i = 0; i < kCount; ++i) {
    if (i > 0) text += i + 1 == kCount ? last_separator : std::string_view(", ");
    text += names[i].name;
  }
  return text;
}

}  // namespace shapescope
