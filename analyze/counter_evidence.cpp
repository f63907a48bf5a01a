#include "analyze/counter_evidence.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace shapescope::analyze {

namespace {

bool known(double value) { return std::isfinite(value); }

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// The kernels `here` launched beyond those of `reference` (a multiset difference, in order).
std::vector<std::string> added_kernels(const KernelCounters& here, const KernelCounters& reference) {
  std::vector<std::string> remaining = reference.kernels, added;
  for (const std::string& name : here.kernels) {
    const auto found = std::find(remaining.begin(), remaining.end(), name);
    if (found == remaining.end()) {
      added.push_back(name);
    } else {
      remaining.erase(found);
    }
  }
  return added;
}

double traffic_ratio(const KernelCounters& counters) {
  return counters.min_bytes > 0 ? counters.dram_bytes() / counters.min_bytes : std::nan("");
}

}  // namespace

std::string kernel_role(const std::string& kernel_name) {
  const std::string name = lowercase(kernel_name);
  if (name.find("reduc") != std::string::npos || name.find("splitk") != std::string::npos ||
      name.find("split_k") != std::string::npos)
    return "split-K reduction";
  if (name.find("memset") != std::string::npos) return "memset (workspace or output clear)";
  return "second kernel";
}

CounterFindings counter_causes(const KernelCounters& here, const KernelCounters& reference,
                               const CounterThresholds& thresholds) {
  CounterFindings findings;
  std::vector<std::string> compared;

  const std::vector<std::string> added = added_kernels(here, reference);
  if (here.kernels.size() > reference.kernels.size() && !added.empty()) {
    std::string list;
    for (const std::string& name : added) list += fmt::format("{}{} ({})", list.empty() ? "" : ", ", kernel_role(name), name);
    findings.causes.push_back({CauseKind::extra_kernel, fmt::format("{}; M={} launched {} kernel(s), M={} {}", list,
                                                                   here.m, here.kernels.size(), reference.m,
                                                                   reference.kernels.size())});
  } else {
    compared.push_back(fmt::format("{} vs {} kernel(s)", here.kernels.size(), reference.kernels.size()));
  }

  const double traffic_here = traffic_ratio(here), traffic_reference = traffic_ratio(reference);
  if (known(traffic_here) && known(traffic_reference) && traffic_reference > 0) {
    const double ratio = traffic_here / traffic_reference;
    const std::string l2 = known(here.l2_hit_rate_pct) && known(reference.l2_hit_rate_pct)
                               ? fmt::format(", L2 hit rate {:.0f}% vs {:.0f}%", here.l2_hit_rate_pct,
                                             reference.l2_hit_rate_pct)
                               : "";
    if (ratio >= thresholds.dram_ratio) {
      findings.causes.push_back(
          {CauseKind::dram_traffic,
           fmt::format("DRAM bytes x{:.2f} of the minimum at M={} vs x{:.2f} at M={} ({:.1f} vs {:.1f} MB{}): "
                       "operand re-reads",
                       traffic_here, here.m, traffic_reference, reference.m, here.dram_bytes() / 1e6,
                       reference.dram_bytes() / 1e6, l2)});
    } else {
      compared.push_back(fmt::format("DRAM x{:.2f} vs x{:.2f} of the minimum", traffic_here, traffic_reference));
    }
  }

  if (known(here.sm_active_pct) && known(reference.sm_active_pct)) {
    const double idle_here = 100 - here.sm_active_pct, idle_reference = 100 - reference.sm_active_pct;
    if (idle_here - idle_reference >= thresholds.idle_sm_points) {
      findings.causes.push_back(
          {CauseKind::idle_sms, fmt::format("SMs idle {:.0f}% of the time at M={} vs {:.0f}% at M={}: tail (too "
                                            "few tiles for the last wave) or a serial phase",
                                            idle_here, here.m, idle_reference, reference.m)});
    } else {
      compared.push_back(fmt::format("SMs idle {:.0f}% vs {:.0f}%", idle_here, idle_reference));
    }
  }

  if (known(here.achieved_occupancy_pct) && known(reference.achieved_occupancy_pct) &&
      reference.achieved_occupancy_pct > 0) {
    const double ratio = here.achieved_occupancy_pct / reference.achieved_occupancy_pct;
    if (ratio <= thresholds.occupancy_ratio) {
      findings.causes.push_back(
          {CauseKind::occupancy_drop, fmt::format("achieved occupancy {:.1f}% at M={} vs {:.1f}% at M={}",
                                                  here.achieved_occupancy_pct, here.m,
                                                  reference.achieved_occupancy_pct, reference.m)});
    } else {
      compared.push_back(fmt::format("occupancy {:.1f}% vs {:.1f}%", here.achieved_occupancy_pct,
                                     reference.achieved_occupancy_pct));
    }
  }

  if (findings.causes.empty()) {
    std::string figures;
    for (const std::string& item : compared) figures += (figures.empty() ? "" : ", ") + item;
    if (known(here.tensor_pipe_pct) && known(reference.tensor_pipe_pct))
      figures += fmt::format("{}tensor pipe {:.0f}% vs {:.0f}%", figures.empty() ? "" : ", ", here.tensor_pipe_pct,
                             reference.tensor_pipe_pct);
    findings.why_not = "counters show no difference beyond the thresholds (" + figures + ")";
  }
  return findings;
}

}  // namespace shapescope::analyze
