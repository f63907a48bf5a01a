#include "analyze/low_utils_rule.hpp"

namespace shapescope::analyze {

std::vector<Anomaly> low_utils_anomalies(const Series& series, double utils_ratio) {
  std::vector<Anomaly> anomalies;
  const std::vector<SeriesPoint>& points = series.points;
  std::size_t best = 0;  // running argmax of utils over points[0, i)
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (points[i - 1].utils > points[best].utils) best = i - 1;
    if (points[best].utils * utils_ratio > points[i].utils) {
      anomalies.push_back({i, points[i].m, points[i].time_us, points[i].utils, best, points[best].m,
                           points[best].utils});
    }
  }
  return anomalies;
}

}  // namespace shapescope::analyze
