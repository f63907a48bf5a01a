#include "analyze/series_finalize.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/profile_schema.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

// Why a measured row cannot be real, or "" when it can.
std::string implausibility(const SeriesPoint& point) {
  if (!(point.time_us >= kMinPlausibleTimeUs)) {
    return fmt::format("time {} us below {} us", point.time_us, kMinPlausibleTimeUs);
  }
  if (!(point.utils >= 0 && point.utils <= kMaxPlausibleUtils)) {
    return fmt::format("MFU {} outside 0..{}", point.utils, kMaxPlausibleUtils);
  }
  if (!(point.tflops >= 0)) return fmt::format("negative TFLOP/s {}", point.tflops);
  return "";
}

// Index into [first, last) of the point kept for one M. "median" keeps a real
// measured row (the lower median of the times), not an average, so its kernel
// name and spread stay consistent with its time.
std::size_t kept_index(const std::vector<SeriesPoint>& group, Dedup dedup) {
  switch (dedup) {
    case Dedup::first:
      return 0;
    case Dedup::fastest: {
      std::size_t best = 0;
      for (std::size_t i = 1; i < group.size(); ++i) {
        if (group[i].time_us < group[best].time_us) best = i;
      }
      return best;
    }
    case Dedup::median: {
      std::vector<std::size_t> order(group.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return group[a].time_us < group[b].time_us; });
      return order[(order.size() - 1) / 2];
    }
  }
  return 0;
}

}  // namespace

void finalize_series(Series& series, Dedup dedup) {
  std::vector<SeriesPoint> rows = std::move(series.points);
  series.points.clear();
  for (SeriesPoint& row : rows) {
    if (row.m < 1) {
      throw UserError(fmt::format("{}:{}: M is {}; it must be at least 1, fix or remove the row", series.source,
                                  row.line, row.m));
    }
    if (row.status == kStatusThrottled) row.throttled = true;
    if (is_measured_status(row.status)) {
      if (std::string why = implausibility(row); !why.empty()) {
        row.status = kStatusImplausible;
        row.note = std::move(why);
      }
    }
    (is_measured_status(row.status) ? series.points : series.excluded).push_back(std::move(row));
  }
  const auto by_m = [](const SeriesPoint& a, const SeriesPoint& b) { return a.m < b.m; };
  // Stable: "first" means first in the file.
  std::stable_sort(series.points.begin(), series.points.end(), by_m);
  std::stable_sort(series.excluded.begin(), series.excluded.end(), by_m);

  std::vector<SeriesPoint> unique;
  unique.reserve(series.points.size());
  for (std::size_t begin = 0; begin < series.points.size();) {
    std::size_t end = begin + 1;
    while (end < series.points.size() && series.points[end].m == series.points[begin].m) ++end;
    std::vector<SeriesPoint> group(std::make_move_iterator(series.points.begin() + static_cast<std::ptrdiff_t>(begin)),
                                   std::make_move_iterator(series.points.begin() + static_cast<std::ptrdiff_t>(end)));
    SeriesPoint kept = std::move(group[kept_index(group, dedup)]);
    if (group.size() > 1) {
      series.duplicates.push_back({kept.m, static_cast<int>(group.size()), kept.time_us});
    }
    unique.push_back(std::move(kept));
    begin = end;
  }
  series.points = std::move(unique);

  if (series.points.empty()) {
    throw UserError(fmt::format("{}: series '{}' has no usable rows ({} rows failed or were skipped); "
                                "re-measure it or pass another file",
                                series.source, series.name, series.excluded.size()));
  }
}

}  // namespace shapescope::analyze
