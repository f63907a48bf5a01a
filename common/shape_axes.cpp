#include "common/shape_axes.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

std::optional<int64_t> positive_integer(std::string_view text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < 1) return std::nullopt;
  return value;
}

bool same_shape(const GemmProblem& a, const GemmProblem& b) {
  return a.n == b.n && a.k == b.k && a.batch_count == b.batch_count;
}

}  // namespace

bool is_raw_shape(const GemmProblem& problem) { return problem.model.empty() && problem.module.empty(); }

GemmProblem parse_shape(const std::string& text, const std::string& option) {
  std::vector<std::string_view> parts;
  std::string_view rest = text;
  for (std::size_t comma; (comma = rest.find(',')) != std::string_view::npos; rest.remove_prefix(comma + 1))
    parts.push_back(rest.substr(0, comma));
  parts.push_back(rest);
  if (parts.size() < 2 || parts.size() > 3) {
    throw UserError(fmt::format("{} '{}': give N,K or N,K,batch, e.g. {} 7168,2304", option, text, option));
  }
  std::vector<int64_t> values;
  for (std::string_view part : parts) {
    const std::optional<int64_t> value = positive_integer(part);
    if (!value) {
      throw UserError(fmt::format("{} '{}': '{}' is not a whole number from 1 to {}; give N,K[,batch], e.g. {} 7168,2304",
                                  option, text, part, INT64_MAX, option));
    }
    values.push_back(*value);
  }
  GemmProblem problem;
  problem.n = values[0];
  problem.k = values[1];
  problem.batch_count = values.size() == 3 ? values[2] : 1;
  return problem;
}

std::vector<GemmProblem> parse_shapes(const std::vector<std::string>& texts, const std::string& option) {
  std::vector<GemmProblem> problems;
  for (const std::string& text : texts) problems.push_back(parse_shape(text, option));
  return distinct_shapes(problems);
}

std::string shape_label(const GemmProblem& problem) {
  const std::string batch = problem.batch_count > 1 ? fmt::format("_B{}", problem.batch_count) : "";
  return fmt::format("N{}_K{}{}", problem.n, problem.k, batch);
}

std::vector<GemmProblem> distinct_shapes(const std::vector<GemmProblem>& problems) {
  std::vector<GemmProblem> distinct;
  for (const GemmProblem& problem : problems) {
    const bool seen = std::any_of(distinct.begin(), distinct.end(),
                                  [&](const GemmProblem& earlier) { return same_shape(earlier, problem); });
    if (!seen) distinct.push_back(problem);
  }
  return distinct;
}

}  // namespace shapescope
