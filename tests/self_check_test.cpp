// bench/self_check: the shapes it sweeps (against what `profile` plans for each catalog model), the summary's counts,
// and the whole flow on the CPU backend: a run, a resumed run that keeps rows, a time budget, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "bench/self_check/self_check_shapes.hpp"
#include "bench/self_check/self_check_summary.hpp"
#include "common/csv.hpp"
#include "common/model_catalog.hpp"
#include "common/user_error.hpp"
#include "profiler/sweep_setup.hpp"
#include "tests/profile_cli_support.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope {
namespace {

using namespace self_check;
using testing_support::Outcome;
using testing_support::ScratchDir;

bool uses_contain(const CheckShape& shape, const ShapeUse& use) {
  return std::find(shape.uses.begin(), shape.uses.end(), use) != shape.uses.end();
}

const CheckShape* find_shape(const ShapeList& list, int64_t n, int64_t k) {
  for (const CheckShape& shape : list.shapes)
    if (shape.n == n && shape.k == k) return &shape;
  return nullptr;
}

bool left_out_has(const ShapeList& list, const ShapeUse& use) {
  return std::any_of(list.left_out.begin(), list.left_out.end(),
                     [&](const LeftOut& layer) { return layer.use == use; });
}

TEST(SelfCheckShapes, EveryCatalogLayerIsSweptOrLeftOutAsProfilePlansIt) {
  const ModelCatalog catalog = ModelCatalog::load_default();
  ShapeList list;
  add_model_shapes(list, catalog, true);
  ScratchDir scratch;
  std::size_t uses = 0;
  for (const CheckShape& shape : list.shapes) uses += shape.uses.size();
  std::size_t planned = 0, swept = 0;
  for (const ModelSpec& model : catalog.models()) {
    for (const int tp : kTpDegrees) {
      // What `profile --model X --module all --tp T` plans (cut scale blocks allowed, so every layer is planned).
      profiler::ProfileRequest request;
      request.model = model.name;
      request.tp = tp;
      request.backend = "cpu";
      request.kernels = {"cpu_fp8_blockscale"};
      request.cut_scale_block = "allow";
      request.m_sweep.lists = {"16"};
      request.out = (scratch.path() / "plan").string();
      const profiler::SweepSetup setup = profiler::prepare_sweep(request);
      for (const GemmProblem& problem : setup.plan.problems) {
        ++planned;
        const ShapeUse use{model.name, problem.module, tp, true};
        const bool sweepable =
            problem.format == BlockFormatId::fp8_blockscale && problem.batch_count == 1 && !problem.cuts_scale_block;
        const CheckShape* shape = find_shape(list, problem.n, problem.k);
        if (sweepable) {
          ++swept;
          ASSERT_NE(shape, nullptr) << model.name << " " << problem.module << " tp" << tp;
          EXPECT_TRUE(uses_contain(*shape, use)) << model.name << " " << problem.module << " tp" << tp;
        } else {
          EXPECT_TRUE(left_out_has(list, use)) << model.name << " " << problem.module << " tp" << tp;
          EXPECT_TRUE(shape == nullptr || !uses_contain(*shape, use));
        }
      }
    }
  }
  // Nothing beyond what profile plans: every use is one planned layer, each shape listed once.
  EXPECT_EQ(uses, swept);
  EXPECT_EQ(swept + list.left_out.size(), planned);
  std::set<std::pair<int64_t, int64_t>> distinct;
  for (const CheckShape& shape : list.shapes) distinct.insert({shape.n, shape.k});
  EXPECT_EQ(distinct.size(), list.shapes.size());
  EXPECT_GT(list.shapes.size(), 100u);  // the catalog's FP8 models give well over a hundred distinct shapes
}

TEST(SelfCheckShapes, NamedExtrasComeFromOutsideTheCatalog) {
  ShapeList list;
  add_model_shapes(list, ModelCatalog::load_default(), true);
  const ModelCatalog catalog = ModelCatalog::load_default();
  ASSERT_EQ(named_extra_shapes().size(), 3u);
  for (const NamedShape& named : named_extra_shapes()) {
    EXPECT_EQ(find_shape(list, named.n, named.k), nullptr) << named.model;
    EXPECT_THROW(catalog.model(named.model), UserError) << named.model;
  }
  add_named_extras(list);
  for (const NamedShape& named : named_extra_shapes()) {
    const CheckShape* shape = find_shape(list, named.n, named.k);
    ASSERT_NE(shape, nullptr);
    EXPECT_TRUE(shape->outside_catalog());
    EXPECT_FALSE(shape->in_catalog());
  }
}

TEST(SelfCheckShapes, RawShapesJoinTheListOnceAndBadOnesAreRefused) {
  ShapeList list;
  add_raw_shapes(list, "4096,7168;512,128;4096,7168");
  ASSERT_EQ(list.shapes.size(), 2u);
  EXPECT_EQ(list.shapes[0].n, 512);  // sorted by (N, K)
  EXPECT_EQ(list.shapes[1].uses.size(), 1u);
  EXPECT_THROW(add_raw_shapes(list, "4096"), UserError);
  EXPECT_THROW(add_raw_shapes(list, "4096,x"), UserError);
  EXPECT_THROW(add_raw_shapes(list, "4096,7168,8"), UserError);
  EXPECT_THROW(add_raw_shapes(list, ""), UserError);
}

TEST(SelfCheckShapes, AnHfConfigGivesTheLayersItsCatalogEntryGivesButOutsideTheCatalog) {
  const ModelCatalog catalog = ModelCatalog::load_default();
  ModelCatalog one_model;
  one_model.add(catalog.model("llama3_8b"));
  ShapeList from_catalog;
  add_model_shapes(from_catalog, one_model, true);
  ModelCatalog outside;
  outside.add(model_from_hf_config(SHAPESCOPE_SOURCE_DIR "/tests/data/hf_configs/llama3_8b.json", "llama3_8b"));
  ShapeList from_config;
  add_model_shapes(from_config, outside, false);
  ASSERT_EQ(from_config.shapes.size(), from_catalog.shapes.size());
  for (std::size_t i = 0; i < from_config.shapes.size(); ++i) {
    EXPECT_EQ(from_config.shapes[i].n, from_catalog.shapes[i].n);
    EXPECT_EQ(from_config.shapes[i].k, from_catalog.shapes[i].k);
    EXPECT_TRUE(from_config.shapes[i].outside_catalog());
    EXPECT_FALSE(from_config.shapes[i].in_catalog());
  }
}

// A kernel's analyzed profile over M = 16, 32, ..., 16 * points, every time `time_us` except where `times` says.
KernelResult profile_of(int points, double time_us, std::map<int64_t, double> times = {},
                        std::vector<int64_t> flagged = {}) {
  KernelResult result;
  result.present = true;
  for (int i = 1; i <= points; ++i) result.time_us[16 * i] = time_us;
  for (const auto& [m, time] : times) result.time_us[m] = time;
  result.flagged_m = std::move(flagged);
  return result;
}

CheckShape catalog_shape(int64_t n) { return {n, 1024, {{"model", "module", 1, true}}}; }
CheckShape outside_shape(int64_t n) { return {n, 1024, {{"other", "module", 8, false}}}; }

TEST(SelfCheckSummary, CountsOnASmallSyntheticProfileSet) {
  constexpr int kPoints = 200;  // M 16 ... 3200: 0.5% of it is one M
  std::vector<ShapeRow> rows;
  // Clean, ours 1.25x faster everywhere; the baseline has 3 flagged M.
  rows.push_back(
      compare_shape(catalog_shape(1), profile_of(kPoints, 8), profile_of(kPoints, 10, {}, {32, 48, 64}), kPoints));
  // One flagged M (0.5%: within), one M where ours is 10% slower.
  rows.push_back(
      compare_shape(catalog_shape(2), profile_of(kPoints, 10, {{1600, 11}}, {1600}), profile_of(kPoints, 10), kPoints));
  // Two flagged M (1%): over the per-shape bound.
  rows.push_back(
      compare_shape(catalog_shape(3), profile_of(kPoints, 10, {}, {512, 528}), profile_of(kPoints, 10), kPoints));
  // Not measured at every M yet: neither clean nor within.
  rows.push_back(compare_shape(catalog_shape(4), profile_of(kPoints - 10, 10), profile_of(kPoints, 10), kPoints));
  // A model outside the catalog, clean.
  rows.push_back(compare_shape(outside_shape(5), profile_of(kPoints, 10), profile_of(kPoints, 10), kPoints));

  EXPECT_NEAR(*rows[0].geomean_ratio, 1.25, 1e-12);
  EXPECT_NEAR(*rows[1].worst_ratio, 10.0 / 11.0, 1e-12);
  EXPECT_EQ(rows[1].worst_m, 1600);
  EXPECT_EQ(rows[1].slower_points, 1);
  EXPECT_DOUBLE_EQ(rows[1].flagged_share(), 0.005);
  EXPECT_FALSE(rows[3].complete());

  const Totals totals = total(rows);
  EXPECT_EQ(totals.catalog_shapes, 4);
  EXPECT_EQ(totals.catalog_complete, 3);
  EXPECT_EQ(totals.catalog_zero_flagged, 1);
  EXPECT_EQ(totals.catalog_within_half_percent, 2);
  EXPECT_EQ(totals.outside_shapes, 1);
  EXPECT_EQ(totals.outside_clean, 1);
  EXPECT_EQ(totals.slower_points, 1);
  EXPECT_EQ(totals.flagged_ours, 3);
  EXPECT_EQ(totals.flagged_baseline, 3);
  EXPECT_EQ(totals.shapes_never_slower, 4);
  EXPECT_EQ(totals.shapes_compared, 5);
  // M >= 1024: 137 of the 200 M per shape; shape 1 at 1.25, shape 2 once at 10/11, shape 4 up to M = 3040.
  const int large = kPoints - 63;
  const double log_sum = large * std::log(1.25) + std::log(10.0 / 11.0);
  const int count = large * 3 + (large - 10) + large;
  EXPECT_NEAR(*totals.geomean_ratio_large_m, std::exp(log_sum / count), 1e-12);

  ASSERT_EQ(totals.targets.size(), 5u);
  EXPECT_FALSE(totals.targets[0].met);  // 1 of 4 catalog shapes clean
  EXPECT_TRUE(totals.targets[0].partial);
  EXPECT_FALSE(totals.targets[1].met);
  EXPECT_TRUE(totals.targets[2].met);   // the outside shape
  EXPECT_FALSE(totals.targets[3].met);  // one M 10% slower
  EXPECT_FALSE(totals.targets[4].met);  // about 1.06x, below 1.1x
  EXPECT_EQ(status_of(totals.targets[2]), "met");

  const std::string csv_text = summary_csv(rows);
  const csv::Table table = csv::parse(csv_text, "summary.csv");
  ASSERT_EQ(table.rows.size(), rows.size());
  EXPECT_EQ(table.rows[1][std::size_t(table.column("flagged_ours"))], "1");
  EXPECT_EQ(table.rows[1][std::size_t(table.column("flagged_m_ours"))], "1600");
  EXPECT_EQ(table.rows[0][std::size_t(table.column("flagged_baseline"))], "3");
  EXPECT_EQ(table.rows[3][std::size_t(table.column("complete"))], "no");
  const std::string markdown = summary_markdown(rows, totals, {"ours", "theirs"}, ShapeList{});
  EXPECT_NE(markdown.find("| 2 | 1024 | 1 of 200 | 0 of 200 |"), std::string::npos) << markdown;
}

TEST(SelfCheckSummary, TargetsOverNoShapesAreNeitherMetNorMissed) {
  const Totals totals = total({});
  for (const Target& target : totals.targets) EXPECT_EQ(status_of(target), "n/a") << target.goal;
}

// The bench on the CPU backend: two raw shapes, three M, events timing.
class SelfCheckCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(binary())) GTEST_SKIP() << "self_check not built";
  }
  static std::string binary() { return (std::filesystem::path(SHAPESCOPE_BIN_DIR) / "self_check").string(); }
  std::string arguments(const std::string& extra = "") const {
    return "--backend cpu --no-catalog --no-named-extras --shapes '256,256;128,256' --m-range 16:48:16 "
           "--peak-tflops 1 --threads 1 --max-seconds-per-point 0.01 --out " +
           (scratch_.path() / "out").string() + " " + extra;
  }
  Outcome run(const std::string& extra = "") const { return testing_support::run_tool(binary(), arguments(extra)); }
  std::filesystem::path raw(const std::string& name) const { return scratch_.path() / "out" / "raw" / name; }
  // M -> the kernel_time field of a profile.
  std::map<std::string, std::string> times(const std::string& name) const {
    const csv::Table table = csv::read_file(raw(name));
    std::map<std::string, std::string> by_m;
    for (const auto& row : table.rows)
      by_m[row[std::size_t(table.column("m"))]] = row[std::size_t(table.column("kernel_time"))];
    return by_m;
  }
  ScratchDir scratch_;
};

TEST_F(SelfCheckCli, RunsResumesWithoutRemeasuringAndSummarizes) {
  const Outcome first = run();
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  EXPECT_NE(first.stdout_text.find("self-check: complete, 12 points"), std::string::npos) << first.stdout_text;
  const std::string ours = "shape_N256_K256_cpu_fp8_blockscale.csv";
  ASSERT_EQ(times(ours).size(), 3u);

  // A run killed after its first M of this file: the rows it wrote stay, the rest is measured.
  const csv::Table table = csv::read_file(raw(ours));
  std::string cut = csv::format_row(table.header);
  cut += csv::format_row(table.rows.front());
  std::ofstream(raw(ours), std::ios::trunc) << cut;
  const std::map<std::string, std::string> kept = times(ours);
  const std::map<std::string, std::string> other = times("shape_N128_K256_cpu_fp8_blockscale.csv");

  const Outcome resumed = run();
  ASSERT_EQ(resumed.exit_code, 0) << resumed.stderr_text;
  EXPECT_NE(resumed.stderr_text.find("10 already in"), std::string::npos) << resumed.stderr_text;
  EXPECT_NE(resumed.stderr_text.find("N=256 K=256: 2 points measured, 4 kept"), std::string::npos)
      << resumed.stderr_text;
  EXPECT_EQ(resumed.stderr_text.find("N=128 K=256"), std::string::npos) << "a complete shape was measured again";
  const std::map<std::string, std::string> after = times(ours);
  ASSERT_EQ(after.size(), 3u);
  for (const auto& [m, time] : kept) EXPECT_EQ(after.at(m), time) << "M=" << m << " was measured again";
  EXPECT_EQ(times("shape_N128_K256_cpu_fp8_blockscale.csv"), other);

  // Complete: nothing to measure; the summary lists both shapes side by side.
  const Outcome again = run();
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.stderr_text.find("12 already in"), std::string::npos);
  EXPECT_EQ(again.stderr_text.find("points measured"), std::string::npos) << again.stderr_text;
  const csv::Table summary = csv::read_file(scratch_.path() / "out" / "summary.csv");
  ASSERT_EQ(summary.rows.size(), 2u);
  for (const auto& row : summary.rows) {
    EXPECT_EQ(row[std::size_t(summary.column("complete"))], "yes");
    EXPECT_EQ(row[std::size_t(summary.column("m_ours"))], "3");
  }
  EXPECT_TRUE(std::filesystem::exists(scratch_.path() / "out" / "analyses" / "shape_N256_K256_cpu_fp8_blockscale.txt"));
  EXPECT_TRUE(std::filesystem::exists(scratch_.path() / "out" / "summary.md"));
}

TEST_F(SelfCheckCli, ATimeBudgetEndsTheRunCleanlyAndTheNextRunFinishes) {
  const Outcome stopped = run("--time-budget 0.000001");
  ASSERT_EQ(stopped.exit_code, 0) << stopped.stderr_text;
  EXPECT_NE(stopped.stdout_text.find("self-check: incomplete"), std::string::npos) << stopped.stdout_text;
  EXPECT_TRUE(std::filesystem::exists(scratch_.path() / "out" / "summary.csv"));
  const Outcome finished = run();
  ASSERT_EQ(finished.exit_code, 0) << finished.stderr_text;
  EXPECT_NE(finished.stdout_text.find("self-check: complete, 12 points"), std::string::npos) << finished.stdout_text;
}

TEST_F(SelfCheckCli, ListsTheShapesOfAnHfConfigWithoutMeasuring) {
  const Outcome listed = testing_support::run_tool(
      binary(), "--list-shapes --no-catalog --no-named-extras --hf-config " SHAPESCOPE_SOURCE_DIR
                "/tests/data/hf_configs/llama3_8b.json --shapes 7168,12288");
  ASSERT_EQ(listed.exit_code, 0) << listed.stderr_text;
  EXPECT_NE(listed.stdout_text.find("4096,4096,no,llama3_8b/o_proj/tp1\n"), std::string::npos) << listed.stdout_text;
  EXPECT_NE(listed.stdout_text.find("7168,12288,no,--shapes/7168,12288"), std::string::npos) << listed.stdout_text;
  EXPECT_NE(listed.stdout_text.find("on an H100 with graph timing"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() / "out"));
}

TEST_F(SelfCheckCli, BadInputIsOneLineAndExit2) {
  for (const std::string extra :
       {"--m-range 16:x", "--shapes 7168", "--backend tpu", "--time-budget -1", "--timing sometimes",
        "--ours cpu_fp8_blockscale --baseline cpu_fp8_blockscale", "--ours no_such_kernel", "--no-such-option"}) {
    const Outcome outcome = run(extra);
    EXPECT_EQ(outcome.exit_code, 2) << extra << "\n" << outcome.stderr_text;
    EXPECT_EQ(outcome.stdout_text, "") << extra;
    EXPECT_EQ(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n'), 1) << extra << "\n"
                                                                                           << outcome.stderr_text;
  }
  // A folder measured with other settings is refused before any work.
  ASSERT_EQ(run().exit_code, 0);
  const Outcome other = run("--timing kernel");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.stderr_text.find("was measured with"), std::string::npos) << other.stderr_text;
  // Summarizing needs the run's shape options: the catalog's list is not what this folder measured.
  const Outcome catalog =
      testing_support::run_tool(binary(), "--summarize-only --out " + (scratch_.path() / "out").string());
  EXPECT_EQ(catalog.exit_code, 2);
  EXPECT_NE(catalog.stderr_text.find("was measured for 2 shapes"), std::string::npos) << catalog.stderr_text;
  EXPECT_EQ(run("--summarize-only").exit_code, 0);
  const Outcome no_folder =
      testing_support::run_tool(binary(), "--summarize-only --out " + (scratch_.path() / "none").string());
  EXPECT_EQ(no_folder.exit_code, 2);
  EXPECT_EQ(no_folder.stdout_text, "");
}

}  // namespace
}  // namespace shapescope
