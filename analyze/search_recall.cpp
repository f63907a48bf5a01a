#include "analyze/search_recall.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "analyze/regions.hpp"

namespace shapescope::analyze {

namespace {

void count_regions(const SeriesAnalysis& exhaustive, const SeriesAnalysis& partial, const std::vector<int64_t>& grid,
                   SearchRecall& recall) {
  const auto one_step_out = [&](int64_t m, bool up) {
    const auto at = std::lower_bound(grid.begin(), grid.end(), m);
    if (up) return at != grid.end() && std::next(at) != grid.end() ? *std::next(at) : m;
    return at != grid.begin() ? *std::prev(at) : m;
  };
  const std::vector<Region> found_by_search = find_regions(partial, {});
  for (const Region& region : find_regions(exhaustive, {})) {
    const int64_t first = one_step_out(region.first_m, false), last = one_step_out(region.last_m, true);
    ++recall.regions;
    recall.regions_found += std::any_of(found_by_search.begin(), found_by_search.end(), [&](const Region& other) {
      return other.first_m <= last && other.last_m >= first;
    });
  }
}

}  // namespace

SearchRecall& SearchRecall::operator+=(const SearchRecall& other) {
  anomalies += other.anomalies;
  anomalies_found += other.anomalies_found;
  anomalies_near_measured += other.anomalies_near_measured;
  plans += other.plans;
  plans_found += other.plans_found;
  regions += other.regions;
  regions_found += other.regions_found;
  missed.insert(missed.end(), other.missed.begin(), other.missed.end());
  missed_plans.insert(missed_plans.end(), other.missed_plans.begin(), other.missed_plans.end());
  return *this;
}

SearchRecall search_recall(const SeriesAnalysis& exhaustive, const SeriesAnalysis& partial,
                           const std::vector<int64_t>& grid) {
  SearchRecall recall;
  count_regions(exhaustive, partial, grid, recall);
  std::map<int64_t, std::size_t> index_of;
  for (std::size_t i = 0; i < grid.size(); ++i) index_of[grid[i]] = i;
  std::set<std::size_t> measured;
  for (const SeriesPoint& point : partial.series->points)
    if (const auto at = index_of.find(point.m); at != index_of.end()) measured.insert(at->second);
  std::map<std::size_t, bool> flagged;  // grid index of each partial anomaly -> it has a plan
  for (const Finding& finding : partial.findings)
    if (const auto at = index_of.find(finding.anomaly.m); at != index_of.end()) flagged[at->second] = finding.best.has_value();
  for (const Finding& finding : exhaustive.findings) {
    const auto at = index_of.find(finding.anomaly.m);
    if (at == index_of.end()) continue;
    bool found = false, planned = false, near_measured = false;
    for (std::size_t i = at->second > 0 ? at->second - 1 : 0; i <= at->second + 1; ++i) {
      near_measured = near_measured || measured.count(i);
      const auto near = flagged.find(i);
      if (near == flagged.end()) continue;
      found = true;
      planned = planned || near->second;
    }
    ++recall.anomalies;
    recall.anomalies_found += found;
    recall.anomalies_near_measured += near_measured;
    if (!found) recall.missed.push_back(finding.anomaly.m);
    if (finding.best) {
      ++recall.plans;
      recall.plans_found += planned;
      if (!planned) recall.missed_plans.push_back(finding.anomaly.m);
    }
  }
  return recall;
}

}  // namespace shapescope::analyze
