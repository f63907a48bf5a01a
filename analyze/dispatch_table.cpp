#include "analyze/dispatch_table.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <tuple>

#include <fmt/format.h>

#include "common/enum_names.hpp"

namespace shapescope::analyze {

namespace {

using GroupKey = std::tuple<std::string, int64_t, int64_t, int64_t>;

// The label a kernel goes by in the table: its registry / library name when that
// tells the group's profiles apart, else the profile's name.
std::vector<std::string> kernel_labels(const std::vector<const Series*>& group) {
  std::vector<std::string> labels;
  for (const Series* series : group) labels.push_back(series->kernel.empty() ? series->name : series->kernel);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (std::count(labels.begin(), labels.end(), labels[i]) > 1) labels[i] = group[i]->name;
  }
  return labels;
}

DispatchAction action_of(PlanKind kind) { return kind == PlanKind::pad_up ? DispatchAction::pad : DispatchAction::split; }

DispatchTable build_table(const std::vector<const Series*>& group, const SplitOptions& options) {
  DispatchTable table;
  const Series& first = *group.front();
  table.device = first.device;
  table.n = first.n;
  table.k = first.k;
  table.batch_count = first.batch_count;
  table.kernels = kernel_labels(group);
  for (const Series* series : group) table.dtypes.push_back(series->dtype);

  // Every M any kernel measured, with each kernel's point index there.
  std::map<int64_t, std::vector<std::pair<std::size_t, std::size_t>>> at_m;  // M → (kernel, point index)
  int64_t largest = 0;
  for (std::size_t s = 0; s < group.size(); ++s) {
    for (std::size_t i = 0; i < group[s]->points.size(); ++i) {
      at_m[group[s]->points[i].m].emplace_back(s, i);
      largest = std::max(largest, group[s]->points[i].m);
    }
  }
  std::vector<std::unique_ptr<SplitSearch>> searches;
  for (const Series* series : group) searches.push_back(std::make_unique<SplitSearch>(*series, options, largest));

  for (const auto& [m, measured] : at_m) {
    DispatchChoice choice;
    choice.m = m;
    choice.single_launch_us = std::numeric_limits<double>::infinity();
    for (const auto& [s, i] : measured) {
      const double time = group[s]->points[i].time_us;
      if (time < choice.single_launch_us) {
        choice.single_launch_us = time;
        choice.predicted_us = time;
        choice.kernel = table.kernels[s];
      }
    }
    for (const auto& [s, i] : measured) {
      PlanSet plans = searches[s]->plans_for(i);
      plans.time_us = choice.single_launch_us;  // a plan must beat the best kernel, not only its own
      const std::optional<SplitPlan> best = plans.best(options.split_ratio);
      if (best && best->predicted_us < choice.predicted_us) {
        choice.kernel = table.kernels[s];
        choice.action = action_of(best->kind);
        choice.parts = best->parts;
        choice.predicted_us = best->predicted_us;
      }
    }
    if (table.ranges.empty() || table.ranges.back().kernel != choice.kernel ||
        table.ranges.back().action != choice.action) {
      table.ranges.push_back({m, m, choice.kernel, choice.action, {}});
    }
    table.ranges.back().m_last = m;
    table.ranges.back().choices.push_back(std::move(choice));
  }
  return table;
}

}  // namespace

constexpr EnumName<DispatchAction> kDispatchActionNames[] = {
    {DispatchAction::run, "run"},
    {DispatchAction::split, "split"},
    {DispatchAction::pad, "pad"},
};

std::string to_string(DispatchAction action) { return name_of(kDispatchActionNames, action); }

std::vector<DispatchTable> build_dispatch_tables(const std::vector<const Series*>& series,
                                                 const SplitOptions& options) {
  std::map<GroupKey, std::vector<const Series*>> groups;
  std::vector<GroupKey> order;  // groups in input order
  for (const Series* one : series) {
    const GroupKey key{one->device, one->n, one->k, one->batch_count};
    if (groups.find(key) == groups.end()) order.push_back(key);
    groups[key].push_back(one);
  }
  std::vector<DispatchTable> tables;
  for (const GroupKey& key : order) tables.push_back(build_table(groups[key], options));
  return tables;
}

nlohmann::json dispatch_json(const std::vector<DispatchTable>& tables, const SplitOptions& options) {
  nlohmann::json root = {{"schema", "shapescope-dispatch/1"},
                         {"split_ratio", options.split_ratio},
                         {"max_parts", options.max_parts},
                         {"launch_overhead_us", options.launch_overhead_us},
                         {"tables", nlohmann::json::array()}};
  for (const DispatchTable& table : tables) {
    nlohmann::json kernels = nlohmann::json::array();
    for (std::size_t i = 0; i < table.kernels.size(); ++i) {
      kernels.push_back({{"name", table.kernels[i]}, {"dtype", table.dtypes[i]}});
    }
    nlohmann::json entry = {{"device", table.device},           {"n", table.n},
                            {"k", table.k},                     {"batch_count", table.batch_count},
                            {"kernels", std::move(kernels)},    {"ranges", nlohmann::json::array()}};
    for (const DispatchRange& range : table.ranges) {
      nlohmann::json row = {{"m_first", range.m_first},
                            {"m_last", range.m_last},
                            {"kernel", range.kernel},
                            {"action", to_string(range.action)},
                            {"swept_m", range.choices.size()}};
      if (range.action != DispatchAction::run) {
        nlohmann::json plans = nlohmann::json::array();
        for (const DispatchChoice& choice : range.choices) {
          plans.push_back({{"m", choice.m},
                           {range.action == DispatchAction::pad ? "pad_to" : "parts",
                            range.action == DispatchAction::pad ? nlohmann::json(choice.parts.front())
                                                                : nlohmann::json(choice.parts)},
                           {"predicted_us", choice.predicted_us},
                           {"single_launch_us", choice.single_launch_us}});
        }
        row["plans"] = std::move(plans);
      }
      entry["ranges"].push_back(std::move(row));
    }
    root["tables"].push_back(std::move(entry));
  }
  return root;
}

}  // namespace shapescope::analyze
