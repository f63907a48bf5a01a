#include "analyze/regions.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analyze/order_statistics.hpp"
#include "common/enum_names.hpp"

namespace shapescope::analyze {

namespace {

// A member's leading cause and what identifies it, so that members whose drop has the same
// mechanism (the same tiles in the same number of waves, the same launched kernel) group.
struct Signature {
  std::optional<Cause> cause;
  std::string key;  // "" when no supported cause
};

// Causes in the order they lead: arithmetic that predicts where and how much first.
constexpr CauseKind kLeadOrder[] = {CauseKind::wave_quantization, CauseKind::kernel_switch, CauseKind::expert_rows,
                                    CauseKind::intensity,         CauseKind::throttling,    CauseKind::power_cap,
                                    CauseKind::transient,         CauseKind::extra_kernel,  CauseKind::idle_sms,
                                    CauseKind::dram_traffic,      CauseKind::occupancy_drop};

Signature signature_of(const Series& series, const Explanation& explanation, std::size_t index) {
  const SeriesPoint& here = series.points[index];
  for (const CauseKind kind : kLeadOrder) {
    const auto found = std::find_if(explanation.causes.begin(), explanation.causes.end(),
                                    [&](const Cause& cause) { return cause.kind == kind; });
    if (found == explanation.causes.end()) continue;
    switch (kind) {
      case CauseKind::wave_quantization: {
        const TileShape tile = here.tile ? *here.tile : tile_from_kernel_name(here.kernel_name).value_or(TileShape{});
        const Waves waves =
            waves_of(here.m, series.n, tile, multiprocessor_count(series), series.batch_count, here.split_k);
        return {*found, fmt::format("waves {}x{} {}", tile.m, tile.n, waves.waves)};
      }
      case CauseKind::kernel_switch:
        return {*found, "kernel " + launched_kernel(here.kernel_name)};
      default:
        return {*found, to_string(kind)};
    }
  }
  return {};
}

// The measured time of `m` in `series`, or nullopt.
std::optional<double> time_at(const Series& series, int64_t m) {
  const auto found = std::lower_bound(series.points.begin(), series.points.end(), m,
                                      [](const SeriesPoint& point, int64_t value) { return point.m < value; });
  if (found == series.points.end() || found->m != m) return std::nullopt;
  return found->time_us;
}

// Another profile of the same GEMM on the same device, timed the same way.
bool same_problem(const Series& a, const Series& b) {
  return &a != &b && !a.grouped && !b.grouped && a.device == b.device && a.n == b.n && a.k == b.k &&
         a.batch_count == b.batch_count && a.timing == b.timing;
}

std::optional<RegionRemedy> another_kernel(const Region& region, const SeriesAnalysis& analysis,
                                           const RegionInputs& inputs) {
  std::optional<RegionRemedy> best;
  for (const Series* other : inputs.other_kernels) {
    if (!same_problem(*analysis.series, *other)) continue;
    double predicted = 0;
    bool measured_everywhere = true;
    for (const std::size_t f : region.findings) {
      const std::optional<double> time = time_at(*other, analysis.findings[f].anomaly.m);
      if (!time) {
        measured_everywhere = false;
        break;
      }
      predicted += *time;
    }
    if (!measured_everywhere || (best && predicted >= best->predicted_us)) continue;
    const std::string label = other->kernel.empty() ? other->name : other->kernel;
    best = RegionRemedy{RemedyKind::another_kernel,
                        fmt::format("run {}{} at these M", label, other->dtype.empty() ? "" : " (" + other->dtype + ")"),
                        predicted, 0};
  }
  return best;
}

// Each anomaly padded up to the fastest measured M' above it, where that is faster.
std::optional<RegionRemedy> pad_up(const Region& region, const SeriesAnalysis& analysis) {
  const Series& series = *analysis.series;
  const std::size_t none = series.points.size();
  std::vector<std::size_t> fastest_after(none + 1, none);  // fastest point at an index > i
  for (std::size_t i = none; i-- > 0;) {
    const std::size_t next = fastest_after[i + 1];
    fastest_after[i] = (i + 1 < none && (next == none || series.points[i + 1].time_us <= series.points[next].time_us))
                           ? i + 1
                           : next;
  }
  double predicted = 0;
  std::vector<int64_t> targets;
  const Anomaly* example = nullptr;
  for (const std::size_t f : region.findings) {
    const Anomaly& anomaly = analysis.findings[f].anomaly;
    const std::size_t target = fastest_after[anomaly.index];
    if (target == none || series.points[target].time_us >= anomaly.time_us) {
      predicted += anomaly.time_us;
      continue;
    }
    predicted += series.points[target].time_us;
    targets.push_back(series.points[target].m);
    if (!example || anomaly.drop() > example->drop()) example = &anomaly;
  }
  if (!example) return std::nullopt;
  const int64_t example_target = series.points[fastest_after[example->index]].m;
  const bool one_target = std::all_of(targets.begin(), targets.end(), [&](int64_t m) { return m == targets.front(); });
  const std::string description =
      one_target && targets.size() == region.findings.size()
          ? fmt::format("pad every M up to {} ({:.1f} µs each)", example_target,
                        series.points[fastest_after[example->index]].time_us)
          : fmt::format("pad {} of {} M up to the fastest larger measured M (M={} to {})", targets.size(),
                        region.findings.size(), example->m, example_target);
  return RegionRemedy{RemedyKind::pad_up, description, predicted, 0};
}

std::optional<RegionRemedy> split(const Region& region, const SeriesAnalysis& analysis) {
  double predicted = 0;
  std::size_t planned = 0;
  const Finding* example = nullptr;
  for (const std::size_t f : region.findings) {
    const Finding& finding = analysis.findings[f];
    if (!finding.best) {
      predicted += finding.anomaly.time_us;
      continue;
    }
    ++planned;
    predicted += finding.best->predicted_us;
    if (!example || finding.best->gain > example->best->gain) example = &finding;
  }
  if (!example) return std::nullopt;
  std::string parts;
  for (const int64_t part : example->best->parts) parts += fmt::format("{}{}", parts.empty() ? "" : "+", part);
  return RegionRemedy{RemedyKind::split,
                      fmt::format("the split search's best plan at {} of {} M (largest gain: M={} as {} {})", planned,
                                  region.findings.size(), example->anomaly.m, to_string(example->best->kind), parts),
                      predicted, 0};
}

std::optional<RegionRemedy> best_remedy(const Region& region, const SeriesAnalysis& analysis,
                                        const RegionInputs& inputs) {
  std::optional<RegionRemedy> best;
  for (std::optional<RegionRemedy> candidate :
       {another_kernel(region, analysis, inputs), pad_up(region, analysis), split(region, analysis)}) {
    if (!candidate || !(candidate->predicted_us < inputs.split_ratio * region.members_us)) continue;
    candidate->gain = 1 - candidate->predicted_us / region.members_us;
    if (!best || candidate->gain > best->gain) best = candidate;
  }
  return best;
}

// The members explained against one reference, and their signatures.
struct Member {
  std::size_t finding = 0;
  Explanation explanation;
  Signature signature;
};

Region close_region(std::vector<Member>& members, std::size_t reference_index, const SeriesAnalysis& analysis,
                    const RegionInputs& inputs) {
  Region region;
  region.reference_index = reference_index;
  std::vector<double> drops;
  std::string key;
  const Member* worst = nullptr;
  const Member* worst_supported = nullptr;
  for (const Member& member : members) {
    const Anomaly& anomaly = analysis.findings[member.finding].anomaly;
    region.findings.push_back(member.finding);
    drops.push_back(anomaly.drop());
    region.members_us += anomaly.time_us;
    const double weight = inputs.weights ? inputs.weights->weight(anomaly.m) : 1.0;
    region.lost_us += weight * anomaly.time_us * anomaly.drop();
    if (!worst || anomaly.drop() > analysis.findings[worst->finding].anomaly.drop()) worst = &member;
    if (member.signature.key.empty()) continue;
    key = member.signature.key;  // one supported key per region (the split guarantees it)
    region.supported_findings.push_back(member.finding);
    if (!worst_supported || anomaly.drop() > analysis.findings[worst_supported->finding].anomaly.drop())
      worst_supported = &member;
  }
  const Anomaly& first = analysis.findings[members.front().finding].anomaly;
  const Anomaly& last = analysis.findings[members.back().finding].anomaly;
  region.first_m = first.m;
  region.last_m = last.m;
  region.measured = last.index - first.index + 1;
  region.worst_drop = *std::max_element(drops.begin(), drops.end());
  region.median_drop = median(drops);
  if (worst_supported) {
    region.cause = worst_supported->signature.cause;
  } else {
    // Noise is no cause of a drop: say so before what the explanation found.
    const std::string summary = worst->explanation.summary();
    region.unexplained = summary.rfind("no supported cause", 0) == 0 ? summary : "no supported cause; " + summary;
  }
  region.remedy = best_remedy(region, analysis, inputs);
  members.clear();
  return region;
}

constexpr EnumName<RemedyKind> kRemedyNames[] = {
    {RemedyKind::another_kernel, "another kernel"}, {RemedyKind::pad_up, "pad up"}, {RemedyKind::split, "split"}};

}  // namespace

std::string to_string(RemedyKind kind) { return name_of(kRemedyNames, kind); }

std::vector<Region> find_regions(const SeriesAnalysis& analysis, const RegionInputs& inputs) {
  const Series& series = *analysis.series;
  std::vector<std::size_t> order(analysis.findings.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return analysis.findings[a].anomaly.index < analysis.findings[b].anomaly.index;
  });

  // Runs, and every member explained against its run's reference.
  struct Placed {
    Member member;
    std::size_t run = 0, reference_index = 0;
    std::string key;  // the member's own, or for one without a cause its run's nearest
  };
  std::vector<Placed> placed;
  std::size_t run = 0, reference_index = 0, reference_of = 0;
  double reference_utils = 0;
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    const Anomaly& anomaly = analysis.findings[order[rank]].anomaly;
    if (rank == 0 || anomaly.index > analysis.findings[order[rank - 1]].anomaly.index + 1 + kRegionGap) {
      run = rank;
      reference_index = anomaly.reference_index;
      reference_utils = anomaly.reference_utils;
      reference_of = anomaly.index;
    }
    Anomaly against = anomaly;
    if (anomaly.index != reference_of) {
      against.reference_index = reference_index;
      against.reference_m = series.points[reference_index].m;
      against.reference_utils = reference_utils;
    }
    Member member{order[rank], explain_anomaly(series, against, inputs.counters), {}};
    member.signature = signature_of(series, member.explanation, anomaly.index);
    std::size_t member_reference = reference_index;
    if (member.signature.key.empty() && anomaly.reference_index != reference_index) {
      // Where the run's reference leaves it without a cause, a member keeps its own against the reference its
      // rule chose, so that grouping never loses a cause that holds for the member alone.
      Explanation own = explain_anomaly(series, anomaly, inputs.counters);
      Signature signature = signature_of(series, own, anomaly.index);
      if (!signature.key.empty()) {
        member.explanation = std::move(own);
        member.signature = std::move(signature);
        member_reference = anomaly.reference_index;
      }
    }
    placed.push_back({std::move(member), run, member_reference, ""});
  }
  // A member without a cause joins the cause of the run around it: the one before it, else after.
  for (std::size_t i = 0; i < placed.size(); ++i) {
    std::string key = placed[i].member.signature.key;
    for (std::size_t j = i; key.empty() && j-- > 0 && placed[j].run == placed[i].run;) key = placed[j].member.signature.key;
    for (std::size_t j = i + 1; key.empty() && j < placed.size() && placed[j].run == placed[i].run; ++j)
      key = placed[j].member.signature.key;
    placed[i].key = key.empty() ? fmt::format("run {}", placed[i].run) : key;
  }

  // Regions: one cause, its anomalies no further apart in M than kRegionSpan of their M.
  struct Open {
    std::vector<Member> members;
    std::size_t reference_index = 0;
    int64_t last_m = 0;
    std::size_t last_index = 0;
  };
  std::vector<Region> regions;
  std::map<std::string, Open> open;
  for (Placed& item : placed) {
    const Anomaly& anomaly = analysis.findings[item.member.finding].anomaly;
    const int64_t m = anomaly.m;
    auto found = open.find(item.key);
    if (found != open.end() && anomaly.index > found->second.last_index + 1 + kRegionGap &&
        static_cast<double>(m - found->second.last_m) > kRegionSpan * static_cast<double>(found->second.last_m)) {
      regions.push_back(close_region(found->second.members, found->second.reference_index, analysis, inputs));
      open.erase(found);
      found = open.end();
    }
    if (found == open.end()) found = open.emplace(item.key, Open{{}, item.reference_index, m, anomaly.index}).first;
    found->second.members.push_back(std::move(item.member));
    found->second.last_m = m;
    found->second.last_index = anomaly.index;
  }
  for (auto& [key, region] : open) regions.push_back(close_region(region.members, region.reference_index, analysis, inputs));
  std::stable_sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) {
    return a.lost_us != b.lost_us ? a.lost_us > b.lost_us : a.first_m < b.first_m;
  });
  return regions;
}

std::string describe_range(const Region& region) {
  const std::string range =
      region.first_m == region.last_m ? fmt::format("M {}", region.first_m) : fmt::format("M {}–{}", region.first_m, region.last_m);
  return fmt::format("{} ({} anomal{} among {} measured M)", range, region.findings.size(),
                     region.findings.size() == 1 ? "y" : "ies", region.measured);
}

std::string describe_drop(const Region& region) {
  if (region.findings.size() == 1) return fmt::format("−{:.1f}%", 100 * region.worst_drop);
  return fmt::format("−{:.1f}% worst, −{:.1f}% median", 100 * region.worst_drop, 100 * region.median_drop);
}

std::string describe_cause(const Region& region) {
  if (!region.cause) return region.unexplained;
  const std::size_t holds = region.supported_findings.size();
  const std::string share =
      holds == region.findings.size() ? "" : fmt::format(" [holds at {} of {} M]", holds, region.findings.size());
  return fmt::format("{}: {}{}", to_string(region.cause->kind), region.cause->evidence, share);
}

std::string describe_remedy(const Region& region) {
  if (!region.remedy) return "none beats the bar";
  return fmt::format("{}: {} → {:.1f} µs vs {:.1f} µs (−{:.1f}%)", to_string(region.remedy->kind),
                     region.remedy->description, region.remedy->predicted_us, region.members_us,
                     100 * region.remedy->gain);
}

nlohmann::json regions_json(const std::vector<Region>& regions, const SeriesAnalysis& analysis) {
  nlohmann::json list = nlohmann::json::array();
  for (const Region& region : regions) {
    nlohmann::json members = nlohmann::json::array();
    for (const std::size_t f : region.findings) members.push_back(analysis.findings[f].anomaly.m);
    nlohmann::json cause = nullptr, remedy = nullptr;
    if (region.cause) cause = {{"kind", to_string(region.cause->kind)}, {"evidence", region.cause->evidence}};
    if (region.remedy) {
      remedy = {{"kind", to_string(region.remedy->kind)},
                {"description", region.remedy->description},
                {"predicted_us", region.remedy->predicted_us},
                {"gain_pct", 100 * region.remedy->gain}};
    }
    list.push_back({{"first_m", region.first_m},
                    {"last_m", region.last_m},
                    {"anomalies", members},
                    {"measured", region.measured},
                    {"reference_m", analysis.series->points[region.reference_index].m},
                    {"worst_drop_pct", 100 * region.worst_drop},
                    {"median_drop_pct", 100 * region.median_drop},
                    {"cause", cause},
                    {"supported_anomalies", region.supported_findings.size()},
                    {"unexplained", region.unexplained},
                    {"remedy", remedy},
                    {"anomalies_us", region.members_us},
                    {"lost_us", region.lost_us}});
  }
  return list;
}

}  // namespace shapescope::analyze
