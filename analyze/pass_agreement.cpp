#include "analyze/pass_agreement.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "analyze/read_multipass_csv.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

std::set<int64_t> flagged_alone(const Series& series, const NoiseAwareOptions& options) {
  std::set<int64_t> ms;
  for (const Anomaly& anomaly : noise_aware_anomalies(series, options)) ms.insert(anomaly.m);
  return ms;
}

PassReading reading(const Series& series, std::size_t i, const std::optional<NoiseAwareScan::Reference>& reference,
                    const std::set<int64_t>& alone) {
  PassReading read;
  read.utils = series.points[i].utils;
  if (reference && reference->judged) {
    read.level = reference->level;
    read.below_bar = read.utils < reference->bar;
  }
  read.flagged_alone = alone.count(series.points[i].m) > 0;
  return read;
}

// The passes restricted to the M all of them measured, in M order.
std::vector<Series> on_common_batches(const std::vector<Series>& passes) {
  std::vector<int64_t> common;
  for (const SeriesPoint& point : passes.front().points) common.push_back(point.m);
  for (const Series& pass : passes) {
    std::vector<int64_t> measured;
    for (const SeriesPoint& point : pass.points) measured.push_back(point.m);
    std::vector<int64_t> both;
    std::set_intersection(common.begin(), common.end(), measured.begin(), measured.end(), std::back_inserter(both));
    common = std::move(both);
  }
  std::vector<Series> restricted;
  for (const Series& pass : passes) {
    Series copy = pass;
    std::erase_if(copy.points, [&](const SeriesPoint& point) {
      return !std::binary_search(common.begin(), common.end(), point.m);
    });
    restricted.push_back(std::move(copy));
  }
  return restricted;
}

}  // namespace

std::vector<int64_t> PassAgreement::holding() const {
  std::vector<int64_t> ms;
  for (const PassAnomaly& anomaly : anomalies) {
    if (anomaly.holds) ms.push_back(anomaly.m);
  }
  return ms;
}

PassAgreement pass_agreement(const std::vector<Series>& all_passes, const NoiseAwareOptions& options) {
  if (all_passes.size() < 2) {
    throw UserError(fmt::format("--passes needs at least two passes of one sweep, got {}; pass two profiles, a file "
                                "with a 'pass' column, or a profile --repeat file",
                                all_passes.size()));
  }
  for (const Series& pass : all_passes) {
    const Series& first = all_passes.front();
    if ((pass.n && first.n && pass.n != first.n) || (pass.k && first.k && pass.k != first.k)) {
      throw UserError(fmt::format("--passes: {} (N={} K={}) and {} (N={} K={}) are not passes of one sweep; pass "
                                  "profiles of the same shape",
                                  first.name, first.n, first.k, pass.name, pass.n, pass.k));
    }
  }
  const std::vector<Series> passes = on_common_batches(all_passes);
  const std::size_t count = passes.size();
  const std::size_t n = passes.front().points.size();
  const auto window_size = static_cast<std::size_t>(options.window);

  std::vector<std::set<int64_t>> alone;
  std::set<int64_t> any_alone;
  std::vector<NoiseAwareScan> scans;
  scans.reserve(count);
  for (const Series& pass : passes) {
    alone.push_back(flagged_alone(pass, options));
    any_alone.insert(alone.back().begin(), alone.back().end());
    scans.emplace_back(pass, options);
  }

  PassAgreement agreement;
  agreement.batches = n;
  for (const Series& pass : passes) agreement.labels.push_back(pass.name);
  // Files of one name in different folders (repeat_run1/x.csv, repeat_run2/x.csv) go by their paths.
  if (std::set<std::string>(agreement.labels.begin(), agreement.labels.end()).size() < count) {
    for (std::size_t p = 0; p < count; ++p) {
      if (!passes[p].source.empty()) agreement.labels[p] = passes[p].source;
    }
  }
  bool previous_flagged = false;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::optional<NoiseAwareScan::Reference>> references;
    bool below_in_every_pass = true;
    for (std::size_t p = 0; p < count; ++p) {
      references.push_back(scans[p].reference(i));
      const auto& reference = references.back();
      below_in_every_pass = below_in_every_pass && reference && reference->judged &&
                            passes[p].points[i].utils < reference->bar;
    }
    bool flagged = false;
    if (below_in_every_pass) {
      std::size_t run = 1;
      const auto below_all = [&](std::size_t j) {
        for (std::size_t p = 0; p < count; ++p) {
          if (!(passes[p].points[j].utils < references[p]->bar)) return false;
        }
        return true;
      };
      while (run < window_size && i + run < n && below_all(i + run)) ++run;
      double weighted_drop = 0, weight = 0, z = 0;
      for (std::size_t p = 0; p < count; ++p) {
        const NoiseAwareScan::DropTest test = scans[p].drop_test(i, run, *references[p]);
        const double drop = (test.level - test.run_mean) / test.level;
        const double sigma = std::max(test.sigma / test.level, 1e-12);
        weighted_drop += drop / (sigma * sigma);
        weight += 1 / (sigma * sigma);
        z = std::max(z, test.z);
      }
      flagged = weighted_drop / weight > z / std::sqrt(weight) || previous_flagged;
    }
    const int64_t m = passes.front().points[i].m;
    if (flagged || any_alone.count(m)) {
      PassAnomaly anomaly;
      anomaly.m = m;
      anomaly.holds = flagged;
      for (std::size_t p = 0; p < count; ++p) {
        const bool judged = references[p] && references[p]->judged;
        anomaly.passes.push_back(
            reading(passes[p], i, judged ? references[p] : scans[p].reference(i, true), alone[p]));
      }
      agreement.anomalies.push_back(std::move(anomaly));
    }
    previous_flagged = flagged;
    for (NoiseAwareScan& scan : scans) scan.accept(i, flagged);
  }
  return agreement;
}

PassAgreement repeat_agreement(const Series& repeat, const NoiseAwareOptions& options) {
  int64_t passes = 1;
  for (const SeriesPoint& point : repeat.points) passes = std::max(passes, point.passes);
  if (passes < 2) {
    throw UserError(fmt::format("--passes {}: no row aggregates several passes; profile with --repeat R, or pass one "
                                "file per pass",
                                repeat.source.empty() ? repeat.name : repeat.source));
  }
  // The fastest pass at every M, where the row says it (a row of one pass is its own fastest).
  Series fastest = repeat;
  for (SeriesPoint& point : fastest.points) {
    if (point.fastest_pass_us <= 0) continue;
    point.utils *= point.time_us / point.fastest_pass_us;
    point.tflops *= point.time_us / point.fastest_pass_us;
    point.time_us = point.fastest_pass_us;
  }
  const std::set<int64_t> median_alone = flagged_alone(repeat, options);
  const std::set<int64_t> fastest_alone = flagged_alone(fastest, options);

  PassAgreement agreement;
  agreement.batches = repeat.points.size();
  agreement.labels = {fmt::format("{} (median of {} passes)", repeat.name, passes),
                      fmt::format("{} (fastest of {} passes)", repeat.name, passes)};
  // The fastest passes' reference leaves out the batches the median flags.
  NoiseAwareScan median_scan(repeat, options), fastest_scan(fastest, options);
  for (std::size_t i = 0; i < repeat.points.size(); ++i) {
    const int64_t m = repeat.points[i].m;
    const bool median_flagged = median_alone.count(m) > 0;
    if (median_flagged || fastest_alone.count(m)) {
      PassAnomaly anomaly;
      anomaly.m = m;
      anomaly.passes = {reading(repeat, i, median_scan.reference(i, true), median_alone),
                        reading(fastest, i, fastest_scan.reference(i, true), fastest_alone)};
      anomaly.holds = median_flagged && anomaly.passes[1].below_bar;
      agreement.anomalies.push_back(std::move(anomaly));
    }
    median_scan.accept(i, median_flagged);
    fastest_scan.accept(i, median_flagged);
  }
  return agreement;
}

PassAgreement pass_agreement_of_files(const std::vector<std::string>& paths, const ReadOptions& read,
                                      const NoiseAwareOptions& options) {
  std::vector<Series> passes;
  for (const std::string& path : paths) {
    for (Series& series : read_series_or_passes(path, read)) passes.push_back(std::move(series));
  }
  if (passes.size() == 1) return repeat_agreement(passes.front(), options);
  return pass_agreement(passes, options);
}

std::string format_pass_agreement(const PassAgreement& agreement, std::size_t list_limit) {
  const std::size_t count = agreement.labels.size();
  std::string text = fmt::format("drop across passes (noise-aware rule, {} passes, {} M measured by all)\n", count,
                                 agreement.batches);
  for (std::size_t p = 0; p < count; ++p) text += fmt::format("  pass {}: {}\n", p + 1, agreement.labels[p]);
  const std::vector<int64_t> holding = agreement.holding();
  std::string listed;
  for (std::size_t i = 0; i < holding.size() && i < list_limit; ++i) listed += fmt::format(" {}", holding[i]);
  if (holding.size() > list_limit) listed += fmt::format(" … ({} more)", holding.size() - list_limit);
  text += fmt::format("  the drop holds across passes at {} M:{}\n", holding.size(), holding.empty() ? " none" : listed);
  if (agreement.anomalies.empty()) return text;
  text += fmt::format("  {:>8} {:>6}", "M", "holds");
  for (std::size_t p = 0; p < count; ++p) text += fmt::format("  {:<28}", fmt::format("pass {}: MFU, drop, alone", p + 1));
  text += "\n";
  for (std::size_t a = 0; a < agreement.anomalies.size() && a < list_limit; ++a) {
    const PassAnomaly& anomaly = agreement.anomalies[a];
    text += fmt::format("  {:>8} {:>6}", anomaly.m, anomaly.holds ? "yes" : "no");
    for (const PassReading& pass : anomaly.passes) {
      const std::string drop = pass.level > 0 ? fmt::format("{:+.1f}%", -100 * pass.drop()) : "-";
      text += fmt::format("  {:<28}", fmt::format("{:.4f} {:>7} {}", pass.utils, drop,
                                                  pass.flagged_alone ? "flagged" : pass.below_bar ? "below bar" : "-"));
    }
    text += "\n";
  }
  if (agreement.anomalies.size() > list_limit) {
    text += fmt::format("  … ({} more)\n", agreement.anomalies.size() - list_limit);
  }
  return text;
}

}  // namespace shapescope::analyze
