#include "bench/self_check/self_check_summary.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "common/csv.hpp"

namespace shapescope::self_check {

namespace {

// exp(mean(log x)) over a running sum of logs.
struct GeoMean {
  double log_sum = 0;
  int64_t count = 0;
  void add(double x) {
    log_sum += std::log(x);
    ++count;
  }
  std::optional<double> value() const {
    return count ? std::optional<double>(std::exp(log_sum / double(count))) : std::nullopt;
  }
};

std::string ratio_text(const std::optional<double>& ratio) { return ratio ? fmt::format("{:.3f}", *ratio) : "-"; }

std::string percent(int64_t part, int64_t whole) {
  return whole ? fmt::format("{:.1f}%", 100.0 * double(part) / double(whole)) : "-";
}

int64_t rows_of(const KernelResult& kernel) { return int64_t(kernel.time_us.size()) + kernel.failed; }

}  // namespace

bool ShapeRow::complete() const {
  return ours.present && baseline.present && rows_of(ours) >= expected_m && rows_of(baseline) >= expected_m;
}

double ShapeRow::flagged_share() const {
  return ours.time_us.empty() ? 0.0 : double(ours.flagged_m.size()) / double(ours.time_us.size());
}

ShapeRow compare_shape(const CheckShape& shape, KernelResult ours, KernelResult baseline, int64_t expected_m) {
  ShapeRow row{shape, std::move(ours), std::move(baseline), expected_m, {}, {}, {}, 0, 0, 0};
  GeoMean all, large;
  for (const auto& [m, our_time] : row.ours.time_us) {
    const auto theirs = row.baseline.time_us.find(m);
    if (theirs == row.baseline.time_us.end() || our_time <= 0 || theirs->second <= 0) continue;
    const double ratio = theirs->second / our_time;
    all.add(ratio);
    if (m >= kLargeM) large.add(ratio);
    if (!row.worst_ratio || ratio < *row.worst_ratio) {
      row.worst_ratio = ratio;
      row.worst_m = m;
    }
    if (our_time > (1 + kSlowerTolerance) * theirs->second) ++row.slower_points;
    ++row.compared_points;
  }
  row.geomean_ratio = all.value();
  row.geomean_ratio_large_m = large.value();
  return row;
}

Totals total(const std::vector<ShapeRow>& rows) {
  Totals t;
  GeoMean all, large;
  for (const ShapeRow& row : rows) {
    const bool clean = row.complete() && row.ours.flagged_m.empty();
    const bool within = row.complete() && row.flagged_share() <= kFlaggedShareLimit;
    if (row.shape.in_catalog()) {
      ++t.catalog_shapes;
      t.catalog_complete += row.complete();
      t.catalog_zero_flagged += clean;
      t.catalog_within_half_percent += within;
    }
    if (row.shape.outside_catalog()) {
      ++t.outside_shapes;
      t.outside_complete += row.complete();
      t.outside_clean += clean && within;
    }
    t.flagged_ours += int64_t(row.ours.flagged_m.size());
    t.flagged_baseline += int64_t(row.baseline.flagged_m.size());
    if (row.compared_points > 0) {
      ++t.shapes_compared;
      t.shapes_never_slower += row.slower_points == 0;
      t.slower_points += row.slower_points;
      t.compared_points += row.compared_points;
    }
    for (const auto& [m, our_time] : row.ours.time_us) {
      const auto theirs = row.baseline.time_us.find(m);
      if (theirs == row.baseline.time_us.end() || our_time <= 0 || theirs->second <= 0) continue;
      all.add(theirs->second / our_time);
      if (m >= kLargeM) large.add(theirs->second / our_time);
    }
  }
  t.geomean_ratio = all.value();
  t.geomean_ratio_large_m = large.value();

  const bool catalog_partial = t.catalog_complete < t.catalog_shapes;
  const bool all_partial = catalog_partial || t.outside_complete < t.outside_shapes;
  const double zero_share = t.catalog_shapes ? double(t.catalog_zero_flagged) / double(t.catalog_shapes) : 0.0;
  t.targets.push_back({"0 flagged M of ours on >= 95% of catalog shapes",
                       fmt::format("{} of {} shapes ({})", t.catalog_zero_flagged, t.catalog_shapes,
                                   percent(t.catalog_zero_flagged, t.catalog_shapes)),
                       zero_share >= kZeroFlaggedShare, catalog_partial, t.catalog_shapes > 0});
  t.targets.push_back({"<= 0.5% of M flagged (ours) on every catalog shape",
                       fmt::format("{} of {} shapes", t.catalog_within_half_percent, t.catalog_shapes),
                       t.catalog_within_half_percent == t.catalog_shapes, catalog_partial, t.catalog_shapes > 0});
  t.targets.push_back({"the same on the shapes from models outside the catalog (0 flagged, <= 0.5%)",
                       fmt::format("{} of {} shapes", t.outside_clean, t.outside_shapes),
                       t.outside_clean == t.outside_shapes, t.outside_complete<t.outside_shapes, t.outside_shapes> 0});
  t.targets.push_back({"never slower than the baseline by more than 5% at any M",
                       fmt::format("{} of {} M slower ({} of {} shapes never slower)", t.slower_points,
                                   t.compared_points, t.shapes_never_slower, t.shapes_compared),
                       t.slower_points == 0, all_partial, t.compared_points > 0});
  t.targets.push_back({"M >= 1024: >= 1.1x the baseline (geometric mean over the shapes' M)",
                       t.geomean_ratio_large_m ? fmt::format("{:.3f}x", *t.geomean_ratio_large_m) : "-",
                       t.geomean_ratio_large_m && *t.geomean_ratio_large_m >= kLargeMRatio, all_partial,
                       t.geomean_ratio_large_m.has_value()});
  return t;
}

std::string status_of(const Target& target) { return !target.covered ? "n/a" : target.met ? "met" : "missed"; }

std::string targets_text(const Totals& totals) {
  std::string text;
  for (const Target& target : totals.targets) {
    text += fmt::format("  {:<8} {}: {}{}\n", status_of(target), target.goal, target.measured,
                        target.partial && target.covered ? " (not every shape measured yet)" : "");
  }
  return text;
}

std::string summary_markdown(const std::vector<ShapeRow>& rows, const Totals& totals, const KernelNames& kernels,
                             const ShapeList& list) {
  std::string text = fmt::format(
      "# Self-check: {} against {}\n\n"
      "Speed ratio = {} time / {} time at the same M (above 1: ours faster). Flagged M: `analyze`'s default "
      "rule on each profile. A shape with `incomplete` is not measured at every M yet.\n\n",
      kernels.ours, kernels.baseline, kernels.baseline, kernels.ours);
  text += "## Targets\n\n| target | measured | status |\n| --- | --- | --- |\n";
  for (const Target& target : totals.targets)
    text += fmt::format("| {} | {} | {}{} |\n", target.goal, target.measured, status_of(target),
                        target.partial && target.covered ? " (incomplete)" : "");
  text += fmt::format(
      "\nCatalog shapes: {} ({} measured at every M); shapes from models outside the catalog: {}. Flagged M over every "
      "shape: {} of {}, {} of {}. Geometric-mean speed ratio over every compared M: {}; over M >= {}: {}.\n\n",
      totals.catalog_shapes, totals.catalog_complete, totals.outside_shapes, totals.flagged_ours, kernels.ours,
      totals.flagged_baseline, kernels.baseline, ratio_text(totals.geomean_ratio), kLargeM,
      ratio_text(totals.geomean_ratio_large_m));
  text += fmt::format(
      "## Shapes\n\n| N | K | flagged M {} | flagged M {} | share flagged (ours) | ratio geomean | worst ratio (M) | "
      "ratio M>={} | M >5% slower | used by |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- "
      "|\n",
      kernels.ours, kernels.baseline, kLargeM);
  for (const ShapeRow& row : rows) {
    const std::string worst =
        row.worst_ratio ? fmt::format("{:.3f} ({})", *row.worst_ratio, row.worst_m) : std::string("-");
    text += fmt::format("| {} | {} | {} of {} | {} of {} | {:.2f}%{} | {} | {} | {} | {} | {} |\n", row.shape.n,
                        row.shape.k, row.ours.flagged_m.size(), row.ours.time_us.size(), row.baseline.flagged_m.size(),
                        row.baseline.time_us.size(), 100 * row.flagged_share(), row.complete() ? "" : " incomplete",
                        ratio_text(row.geomean_ratio), worst, ratio_text(row.geomean_ratio_large_m), row.slower_points,
                        uses_text(row.shape));
  }
  if (!list.left_out.empty()) {
    text +=
        "\n## Layers not swept\n\n| model | module | TP | N | K | (N, K) swept for another layer | why |\n"
        "| --- | --- | ---: | ---: | ---: | --- | --- |\n";
    for (const LeftOut& layer : list.left_out)
      text += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", layer.use.model, layer.use.module, layer.use.tp,
                          layer.n, layer.k, list.sweeps(layer.n, layer.k) ? "yes" : "no", layer.reason);
  }
  return text;
}

std::string summary_csv(const std::vector<ShapeRow>& rows) {
  std::string text = csv::format_row({"n", "k", "catalog", "outside_catalog", "complete", "m_ours", "m_baseline",
                                      "flagged_ours", "flagged_baseline", "flagged_share_ours", "geomean_ratio",
                                      "worst_ratio", "worst_m", "geomean_ratio_m_ge_1024", "slower_5pct_points",
                                      "flagged_m_ours", "flagged_m_baseline", "uses"});
  for (const ShapeRow& row : rows) {
    text += csv::format_row({std::to_string(row.shape.n), std::to_string(row.shape.k),
                             row.shape.in_catalog() ? "yes" : "no", row.shape.outside_catalog() ? "yes" : "no",
                             row.complete() ? "yes" : "no", std::to_string(row.ours.time_us.size()),
                             std::to_string(row.baseline.time_us.size()), std::to_string(row.ours.flagged_m.size()),
                             std::to_string(row.baseline.flagged_m.size()), fmt::format("{:.5f}", row.flagged_share()),
                             ratio_text(row.geomean_ratio), ratio_text(row.worst_ratio),
                             row.worst_ratio ? std::to_string(row.worst_m) : "", ratio_text(row.geomean_ratio_large_m),
                             std::to_string(row.slower_points), fmt::format("{}", fmt::join(row.ours.flagged_m, " ")),
                             fmt::format("{}", fmt::join(row.baseline.flagged_m, " ")), uses_text(row.shape)});
  }
  return text;
}

}  // namespace shapescope::self_check
