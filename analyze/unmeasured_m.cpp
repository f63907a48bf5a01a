#include "analyze/unmeasured_m.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace shapescope::analyze {

UnmeasuredM unmeasured_m(const Series& series) {
  UnmeasuredM unmeasured;
  unmeasured.grid_points = series.m_grid.size();
  std::set<int64_t> rows;
  for (const SeriesPoint& point : series.points) rows.insert(point.m);
  for (const SeriesPoint& point : series.excluded) rows.insert(point.m);
  bool open = false;
  for (const int64_t m : series.m_grid) {
    if (rows.count(m)) {
      open = false;
      continue;
    }
    ++unmeasured.count;
    if (open) {
      unmeasured.ranges.back().second = m;
    } else {
      unmeasured.ranges.emplace_back(m, m);
      open = true;
    }
  }
  return unmeasured;
}

std::string describe_unmeasured(const UnmeasuredM& unmeasured, std::size_t max_ranges) {
  std::string ranges;
  for (std::size_t i = 0; i < unmeasured.ranges.size() && i < max_ranges; ++i) {
    const auto [first, last] = unmeasured.ranges[i];
    ranges += fmt::format("{}{}", i > 0 ? ", " : "", first == last ? fmt::format("{}", first) : fmt::format("{}–{}", first, last));
  }
  if (unmeasured.ranges.size() > max_ranges) ranges += ", …";
  return fmt::format("{} of {} grid M not measured ({} ranges{}{})", unmeasured.count, unmeasured.grid_points,
                     unmeasured.ranges.size(), ranges.empty() ? "" : ": ", ranges);
}

nlohmann::json unmeasured_json(const UnmeasuredM& unmeasured) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const auto& [first, last] : unmeasured.ranges) ranges.push_back({first, last});
  return {{"grid_points", unmeasured.grid_points}, {"count", unmeasured.count}, {"ranges", ranges}};
}

}  // namespace shapescope::analyze
