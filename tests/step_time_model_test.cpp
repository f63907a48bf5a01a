// The step time T(M) of a model from its modules' profiles: layer weighting, the
// fastest kernel per M, the grid of M every module measured, experts per expert or
// grouped, and the one-line errors for inputs that cannot make a step.
#include <gtest/gtest.h>

#include "analyze/step_time_model.hpp"
#include "common/model_catalog.hpp"
#include "common/user_error.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope::analyze {
namespace {

// 4 decoder layers; dense_b runs in 1; experts: 4 per layer, 2 per token. At tp2:
// attn N=256 K=256, dense_b N=256 K=256, experts N=64 K=256 per expert.
ModelSpec toy_model() {
  return parse_model_json(R"({"name": "toy", "source": "test", "num_hidden_layers": 4, "module_layers": {"dense_b": 1},
    "layers": [{"name": "attn", "k": 256, "n": 512, "tp": "split_n"},
               {"name": "dense_b", "k": 512, "n": 256, "tp": "split_k"},
               {"name": "experts", "k": 256, "n": 128, "tp": "split_n", "experts": 4, "top_k": 2, "expert_width": 64}]})",
                          "toy.json");
}

Series profile(const std::string& module, const std::string& kernel, std::vector<std::pair<int64_t, double>> times,
               int tp = 2) {
  Series series;
  series.source = module + "_" + kernel + ".csv";
  series.format = "shapescope";
  series.device = "NVIDIA H100 80GB HBM3";
  series.kernel = kernel;
  series.model = "toy";
  series.module = module;
  series.tp = tp;
  series.n = module == "experts" ? 64 : 256;
  series.k = 256;
  for (const auto& [m, time_us] : times) {
    SeriesPoint point;
    point.m = m;
    point.time_us = time_us;
    point.kernel_name = kernel + "_config";
    series.points.push_back(point);
  }
  return series;
}

std::vector<Series> toy_profiles() {
  return {profile("attn", "a", {{1, 10}, {2, 11}, {4, 12}, {8, 20}}),
          profile("attn", "b", {{1, 12}, {2, 9}, {4, 13}, {8, 15}}),
          profile("dense_b", "a", {{1, 5}, {2, 5}, {4, 6}, {8, 7}, {16, 9}}),
          profile("experts", "a", {{1, 1}, {2, 2}, {3, 3}})};
}

TEST(StepTimeModel, WeighsEachModuleByTheLayersThatRunIt) {
  const std::vector<Series> profiles = toy_profiles();
  const StepTimeModel model = build_step_time_model(toy_model(), profiles, {});
  ASSERT_EQ(model.modules.size(), 3u);
  EXPECT_EQ(model.modules[0].layers, 4);
  EXPECT_EQ(model.modules[1].layers, 1);
  EXPECT_EQ(model.modules[2].cost_model, ModuleCostModel::per_expert);
  // M=16 is dense_b's alone; at M=8 each active expert gets 16/3.98 = 4 rows, beyond its profile (3).
  EXPECT_EQ(model.grid, (std::vector<int64_t>{1, 2, 4}));
  // Experts (E=4, k=2): M=1 -> 2 active x T(1 row); M=2 -> 3 active x T(4/3 -> 1 row);
  // M=4 -> 3.75 active x T(8/3.75 -> 2 rows).
  ASSERT_EQ(model.step_us.size(), 3u);
  EXPECT_DOUBLE_EQ(model.step_us[0], 4 * 10 + 1 * 5 + 4 * (2 * 1.0));
  EXPECT_DOUBLE_EQ(model.step_us[1], 4 * 9 + 1 * 5 + 4 * (3 * 1.0));
  EXPECT_DOUBLE_EQ(model.step_us[2], 4 * 12 + 1 * 6 + 4 * (3.75 * 2.0));
  // The fastest kernel per M, and what it ran.
  EXPECT_EQ(model.modules[0].points[0].kernel, "a");
  EXPECT_EQ(model.modules[0].points[1].kernel, "b");
  EXPECT_EQ(model.modules[0].points[1].kernel_name, "b_config");
  EXPECT_EQ(model.modules[2].points[2].profiled_m, 2);
  EXPECT_DOUBLE_EQ(model.modules[2].points[2].active_experts, 3.75);
  ASSERT_EQ(model.notes.size(), 3u);
  EXPECT_NE(model.notes[0].find("M=16 (missing in attn)"), std::string::npos) << model.notes[0];
  EXPECT_NE(model.notes[1].find("M=8 (experts needs more rows per expert"), std::string::npos) << model.notes[1];
  EXPECT_NE(model.notes[2].find("per-expert profile"), std::string::npos) << model.notes[2];
}

TEST(StepTimeModel, AGroupedProfileOfTheExpertsReplacesThePerExpertOne) {
  std::vector<Series> profiles = toy_profiles();
  Series grouped = profile("experts", "grouped", {{1, 3}, {2, 4}, {4, 5}, {8, 6}});
  grouped.grouped = GroupedSeriesInfo{"uniform", "contiguous:1", 1, 4};  // experts split by TP, as the dense layers
  profiles.push_back(grouped);
  const StepTimeModel model = build_step_time_model(toy_model(), profiles, {});
  EXPECT_EQ(model.modules[2].cost_model, ModuleCostModel::grouped);
  ASSERT_EQ(model.modules[2].profiles.size(), 1u);
  EXPECT_EQ(model.grid, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_DOUBLE_EQ(model.step_us[3], 4 * 15 + 1 * 7 + 4 * 6);
  EXPECT_NE(model.notes.front().find("experts: grouped profiles given, its per-expert profiles are not used"),
            std::string::npos)
      << model.notes.front();
}

// Expert parallelism: profile --tp 1 --ep 2 --module experts gives whole experts (N=128 K=256) of
// 2 of the 4 experts per GPU; that GPU's step runs them beside attention and dense_b at tp2.
Series expert_parallel_profile(int64_t ep, std::vector<std::pair<int64_t, double>> times) {
  Series grouped = profile("experts", "grouped_ep", std::move(times), 1);
  grouped.n = 128;
  grouped.grouped = GroupedSeriesInfo{"uniform", "contiguous:1", ep, 4 / ep};
  return grouped;
}

TEST(StepTimeModel, ExpertParallelGroupedProfilesJoinTheTensorParallelLayers) {
  std::vector<Series> profiles = toy_profiles();
  profiles.pop_back();  // the per-expert tp2 profile
  profiles.push_back(expert_parallel_profile(2, {{1, 3}, {2, 4}, {4, 5}, {8, 6}}));
  const StepTimeModel model = build_step_time_model(toy_model(), profiles, {});
  EXPECT_EQ(model.tp, 2);
  EXPECT_EQ(model.ep, 2);
  const ModuleTerm& experts = model.modules[2];
  EXPECT_EQ(experts.cost_model, ModuleCostModel::grouped);
  EXPECT_EQ(experts.problem.n, 128);  // unsplit, not the tp2 shape (64)
  EXPECT_EQ(experts.problem.local_experts, 2);
  EXPECT_EQ(model.grid, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_DOUBLE_EQ(model.step_us[3], 4 * 15 + 1 * 7 + 4 * 6);
  ASSERT_FALSE(model.notes.empty());
  EXPECT_NE(model.notes.front().find("experts: grouped profiles at ep2 (2 of 4 experts per GPU"), std::string::npos)
      << model.notes.front();
}

TEST(StepTimeModel, ExcludedModulesLeaveTheStep) {
  const std::vector<Series> profiles = {profile("attn", "a", {{1, 10}, {2, 11}})};
  const StepTimeModel model = build_step_time_model(toy_model(), profiles, {"dense_b", "experts"});
  EXPECT_EQ(model.excluded, (std::vector<std::string>{"dense_b", "experts"}));
  EXPECT_EQ(model.step_us, (std::vector<double>{40, 44}));
}

std::string error_of(const std::vector<Series>& profiles, const std::vector<std::string>& excluded = {},
                     const ModelSpec& spec = toy_model()) {
  return testing_support::user_error_of([&] { build_step_time_model(spec, profiles, excluded); });
}

TEST(StepTimeModel, MissingModulesAreNamed) {
  const std::string message = error_of({profile("attn", "a", {{1, 10}})});
  EXPECT_NE(message.find("no profile for 2 module(s) of toy at tp2: dense_b, experts"), std::string::npos) << message;
  EXPECT_NE(message.find("--exclude-module"), std::string::npos) << message;
}

TEST(StepTimeModel, MixedSettingsAndMismatchedShapesAreRejected) {
  std::vector<Series> mixed_tp = toy_profiles();
  mixed_tp[2].tp = 1;
  EXPECT_NE(error_of(mixed_tp).find("profiles of different TP degrees mixed"), std::string::npos);
  std::vector<Series> mixed_model = toy_profiles();
  mixed_model[1].model = "other";
  EXPECT_NE(error_of(mixed_model).find("profiles of different models mixed"), std::string::npos);
  std::vector<Series> mixed_device = toy_profiles();
  mixed_device[3].device = "NVIDIA H200";
  EXPECT_NE(error_of(mixed_device).find("profiles of different devices mixed"), std::string::npos);
  std::vector<Series> wrong_shape = toy_profiles();
  wrong_shape[2].n = 512;
  EXPECT_NE(error_of(wrong_shape).find("measured N=512 K=256 batch=1, but toy dense_b at tp2 is N=256"),
            std::string::npos);
  std::vector<Series> no_sidecar = toy_profiles();
  no_sidecar[0].tp = 0;
  EXPECT_NE(error_of(no_sidecar).find("no sidecar naming model, module and tp"), std::string::npos);
  std::vector<Series> raw_shape = toy_profiles();  // profile --shape: no model, no module, tp 1
  raw_shape[0].model = raw_shape[0].module = "";
  raw_shape[0].tp = 1;
  EXPECT_NE(error_of(raw_shape).find("a raw --shape profile names none"), std::string::npos);
  std::vector<Series> stray = toy_profiles();
  stray[0].module = "lm_head";
  EXPECT_NE(error_of(stray).find("module 'lm_head' is not a module of toy"), std::string::npos);
  std::vector<Series> grouped_dense = toy_profiles();
  grouped_dense[2].grouped = GroupedSeriesInfo{"uniform", "contiguous:1", 8, 32};
  EXPECT_NE(error_of(grouped_dense).find("which has no experts"), std::string::npos);
  EXPECT_NE(error_of(toy_profiles(), {"mlp"}).find("--exclude-module mlp: not a module of toy"), std::string::npos);
}

TEST(StepTimeModel, ExpertParallelProfilesOfTwoDegreesOrBesideTensorSplitOnesAreRejected) {
  std::vector<Series> two_eps = toy_profiles();
  two_eps.push_back(expert_parallel_profile(2, {{1, 3}, {2, 4}}));
  two_eps.push_back(expert_parallel_profile(4, {{1, 3}, {2, 4}}));
  two_eps.back().source = "experts_ep4.csv";
  EXPECT_NE(error_of(two_eps).find("grouped profiles of different EP degrees mixed"), std::string::npos);

  std::vector<Series> both_splits = toy_profiles();
  both_splits.push_back(expert_parallel_profile(2, {{1, 3}, {2, 4}}));
  both_splits.push_back(profile("experts", "grouped_tp", {{1, 3}, {2, 4}}));
  both_splits.back().grouped = GroupedSeriesInfo{"uniform", "contiguous:1", 1, 4};
  EXPECT_NE(error_of(both_splits).find("experts: grouped profiles split by TP"), std::string::npos);

  std::vector<Series> wrong_shape = toy_profiles();
  wrong_shape.push_back(expert_parallel_profile(2, {{1, 3}}));
  wrong_shape.back().n = 64;  // the tp2 shape under an ep2 profile
  EXPECT_NE(error_of(wrong_shape).find("measured N=64 K=256 batch=1, but toy experts at ep2 is N=128"),
            std::string::npos)
      << error_of(wrong_shape);
}

TEST(StepTimeModel, NoCommonMOrNoLayerCountIsAnError) {
  std::vector<Series> disjoint = toy_profiles();
  disjoint[2] = profile("dense_b", "a", {{3, 5}, {5, 6}});
  EXPECT_NE(error_of(disjoint).find("no M is measured by every module"), std::string::npos);
  const ModelSpec without_layers = parse_model_json(
      R"({"name": "toy", "source": "test", "layers": [{"name": "attn", "k": 256, "n": 512, "tp": "split_n"}]})",
      "toy.json");
  EXPECT_NE(error_of({profile("attn", "a", {{1, 10}})}, {}, without_layers).find("does not state num_hidden_layers"),
            std::string::npos);
}

}  // namespace
}  // namespace shapescope::analyze
