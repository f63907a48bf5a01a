#include "profiler/grouped_setup.hpp"

#include <bit>

#include <fmt/format.h>

#include "common/user_error.hpp"
#include "kernels/synthetic_operands.hpp"
#include "profiler/grouped_presets.hpp"
#include "profiler/moe_routing.hpp"

namespace shapescope::profiler {

namespace {

constexpr int64_t kMaxAlign = 256;
constexpr uint64_t kTokenSeedSalt = 0x70CE45EEDull;

struct LayoutChoice {
  kernels::GroupLayout layout = kernels::GroupLayout::contiguous;
  int64_t align = kDefaultGroupAlign;
  int64_t max_m = 0;  // masked, fixed by --max-m (0: per M)
  std::string label;  // for file names
};

LayoutChoice parse_layout(const GroupedRequest& request) {
  LayoutChoice choice;
  if (request.layout == "masked") {
    choice.layout = kernels::GroupLayout::masked;
  } else if (!request.layout.empty() && request.layout != "contiguous") {
    throw UserError(fmt::format("--layout '{}' is not contiguous or masked", request.layout));
  }
  if (request.align != 0) {
    if (request.align < 1 || request.align > kMaxAlign || !std::has_single_bit(uint64_t(request.align))) {
      throw UserError(fmt::format("--align {} must be a power of two from 1 to {} (DeepGEMM pads to 128 on Hopper)",
                                  request.align, kMaxAlign));
    }
    choice.align = request.align;
  }
  if (request.max_m != 0) {
    if (choice.layout != kernels::GroupLayout::masked)
      throw UserError("--max-m sizes masked slots; add --layout masked or drop --max-m");
    if (request.max_m < 1) throw UserError(fmt::format("--max-m {} must be a positive row count", request.max_m));
    choice.max_m = request.max_m;
  }
  choice.label = choice.layout == kernels::GroupLayout::contiguous
                     ? fmt::format("contiguous{}", choice.align)
                     : (choice.max_m > 0 ? fmt::format("masked{}", choice.max_m) : "masked");
  return choice;
}

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

kernels::GroupedShape lay_out(const LayoutChoice& choice, int64_t n, int64_t k, std::vector<int64_t> rows) {
  kernels::GroupedShape shape;
  shape.n = n;
  shape.k = k;
  shape.rows = std::move(rows);
  shape.layout = choice.layout;
  shape.align = choice.align;
  if (choice.layout == kernels::GroupLayout::masked)
    shape.max_m = choice.max_m > 0 ? choice.max_m : std::max<int64_t>(round_up(shape.max_rows(), choice.align), choice.align);
  return shape;
}

nlohmann::json describe(const LayoutChoice& choice) {
  return {{"layout", kernels::to_string(choice.layout)},
          {"align", choice.align},
          {"max_m", choice.max_m > 0 ? nlohmann::json(choice.max_m) : nlohmann::json("largest group of each M, rounded up to align")}};
}

}  // namespace

bool GroupedRequest::any_grouped_option() const {
  return ep != 1 || !routing.empty() || !layout.empty() || align != 0 || max_m != 0 || !preset.empty();
}

bool wants_grouped(const std::string& module, const GroupedRequest& request) {
  return module == kExpertsModule || !request.preset.empty();
}

uint64_t token_seed_for(uint64_t seed, int64_t m) { return kernels::synthetic::mix(seed ^ kTokenSeedSalt) + uint64_t(m); }

GroupedSweepPlan plan_grouped_experts(const std::vector<GemmProblem>& expert_problems, const GroupedRequest& request,
                                      const std::vector<int64_t>& m_values, uint64_t seed) {
  const LayoutChoice choice = parse_layout(request);
  const RoutingSpec routing = parse_routing(request.routing.empty() ? "uniform" : request.routing);
  GroupedSweepPlan plan;
  plan.seed = seed;
  plan.description = describe(choice);
  plan.description["token_seed_rule"] = "splitmix64(seed ^ 0x70CE45EED) + M";
  for (const GemmProblem& problem : expert_problems) {
    const Router router(routing, problem.experts, problem.top_k, seed);
    GroupedSeries series;
    series.problem = problem;
    series.routing = routing.text();
    series.routing_label = routing.label();
    series.layout_label = choice.label;
    for (const int64_t m : m_values) {
      GroupedPoint point;
      point.m = m;
      point.token_seed = routing.kind == RoutingKind::balanced ? 0 : token_seed_for(seed, m);
      point.shape = lay_out(choice, problem.n, problem.k,
                            local_rows(router.expert_rows(m, point.token_seed), problem.experts / problem.local_experts));
      if (choice.max_m > 0 && point.shape.max_rows() > choice.max_m) {
        throw UserError(fmt::format("--max-m {}: at M={} an expert of {} {} gets {} rows; raise --max-m to at least {} "
                                    "or drop it (slots then fit the largest group)",
                                    choice.max_m, m, problem.model, problem.module, point.shape.max_rows(),
                                    point.shape.max_rows()));
      }
      series.points.push_back(std::move(point));
    }
    plan.series.push_back(std::move(series));
  }
  return plan;
}

GroupedSweepPlan plan_grouped_preset(const GroupedRequest& request) {
  if (!request.routing.empty())
    throw UserError("--grouped-preset fixes every group's rows; drop --routing");
  if (request.ep != 1) throw UserError("--grouped-preset fixes every group's rows; drop --ep");
  const GroupedPreset& preset = find_grouped_preset(request.preset);
  const LayoutChoice choice = parse_layout(request);
  GroupedSweepPlan plan;
  plan.description = describe(choice);
  plan.description["preset"] = preset.name;
  plan.description["preset_source"] = preset.source;
  for (const PresetGroupedProblem& problem : preset.problems) {
    GroupedSeries series;
    series.preset = true;
    series.problem.model = preset.name;
    series.problem.module = problem.label;
    series.problem.n = problem.n;
    series.problem.k = problem.k;
    series.problem.experts = series.problem.local_experts = int64_t(problem.rows.size());
    series.problem.format = preset.format;
    series.routing = "preset:" + preset.name;
    series.routing_label = "preset";
    series.layout_label = choice.label;
    GroupedPoint point;
    point.shape = lay_out(choice, problem.n, problem.k, problem.rows);
    point.m = point.shape.useful_rows();
    if (choice.max_m > 0 && point.shape.max_rows() > choice.max_m) {
      throw UserError(fmt::format("--max-m {}: preset problem {} has a group of {} rows; raise --max-m or drop it",
                                  choice.max_m, problem.label, point.shape.max_rows()));
    }
    series.points.push_back(std::move(point));
    plan.series.push_back(std::move(series));
  }
  return plan;
}

}  // namespace shapescope::profiler
