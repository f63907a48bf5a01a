#include "analyze/stability.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "analyze/low_utils_rule.hpp"
#include "analyze/noise_aware_rule.hpp"
#include "analyze/read_multipass_csv.hpp"
#include "common/user_error.hpp"
#include "triage_test_support.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope::analyze {
namespace {

using triage_testing::data_file;

TEST(Stability, JaccardOfSets) {
  EXPECT_DOUBLE_EQ(jaccard({1, 2, 3}, {2, 3, 4}), 0.5);
  EXPECT_DOUBLE_EQ(jaccard({}, {}), 1.0);
  EXPECT_DOUBLE_EQ(jaccard({5}, {}), 0.0);
  EXPECT_EQ(restrict_to({1, 4, 8, 12}, {4, 5, 12}), (std::vector<int64_t>{4, 12}));
}

TEST(Stability, ComparesOnlyWhatBothRunsMeasured) {
  // Run 2 never measured M=40, so its absence from run 2's flags is no disagreement.
  const FlaggedRun first{"a", {8, 16, 24, 32, 40}, {24, 40}};
  const FlaggedRun second{"b", {8, 16, 24, 32}, {24}};
  const FlaggedRun third{"c", {8, 16, 24, 32, 40}, {16, 24}};
  const StabilityReport report = stability_report({first, second, third}, "test");
  EXPECT_DOUBLE_EQ(report.jaccard[0][1], 1.0);
  EXPECT_DOUBLE_EQ(report.jaccard[0][2], 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(report.jaccard[1][2], 0.5);
  EXPECT_EQ(report.in_every_run, (std::vector<int64_t>{24}));
  EXPECT_EQ(report.measured_by_all, (std::vector<int64_t>{8, 16, 24, 32}));
  ASSERT_EQ(report.anomalies.size(), 3u);
  EXPECT_EQ(report.anomalies[0].m, 16);
  EXPECT_EQ(report.anomalies[0].measured_by, 3u);
  EXPECT_TRUE(report.anomalies[1].reproduced());  // 24, by all three
  EXPECT_EQ(report.anomalies[2].measured_by, 2u);  // 40: run 2 never measured it
  EXPECT_FALSE(report.anomalies[2].reproduced());
  const std::string text = format_stability(report, 10);
  EXPECT_NE(text.find("flagged in every run: 1 M: 24"), std::string::npos) << text;
  EXPECT_NE(text.find("not reproduced: 2 M: 16 (run 3 of 3), 40 (run 1 of 2)"), std::string::npos) << text;
  EXPECT_THROW(stability_report({first}, "test"), UserError);
}

TEST(Stability, MultipassReaderSplitsByPass) {
  const testing_support::ScratchDir scratch;
  const std::filesystem::path file = scratch.path() / "shapescope_triage_passes.csv";
  {
    std::ofstream out(file);
    out << "pass,batch,kernel_time,flops,utils\n"
           "1,16,10.0,2.0,0.50\n2,16,11.0,1.8,0.45\n1,32,10.0,4.0,0.60\n3,16,9.0,2.2,0.55\n2,32,10.5,3.8,0.58\n";
  }
  const std::vector<Series> passes = read_multipass_csv(file.string(), {});
  ASSERT_EQ(passes.size(), 3u);
  EXPECT_EQ(passes[0].name, "shapescope_triage_passes pass 1");
  EXPECT_EQ(passes[1].points.size(), 2u);
  EXPECT_DOUBLE_EQ(passes[1].points[0].time_us, 11.0);
  EXPECT_EQ(passes[2].points.size(), 1u);
  EXPECT_EQ(read_series_or_passes(file.string(), {}).size(), 3u);
  std::ofstream(file) << "batch,kernel_time,flops,utils\n16,10.0,2.0,0.5\n";
  EXPECT_THROW(read_multipass_csv(file.string(), {}), UserError);
  EXPECT_EQ(read_series_or_passes(file.string(), {}).size(), 1u);
}

TEST(Stability, TwoPassH200UnderBothRules) {
  const auto path = data_file(triage_testing::kTwoPassH200);
  const std::vector<Series> passes = read_series_or_passes(path.string(), {});
  ASSERT_EQ(passes.size(), 2u);
  const AnomalyFinder study = [](const Series& s) { return low_utils_anomalies(s, 0.85); };
  const AnomalyFinder noise_aware = [](const Series& s) { return noise_aware_anomalies(s, {}); };
  const StabilityReport study_report = stability_report({flag_run(passes[0], study), flag_run(passes[1], study)}, "study");
  EXPECT_EQ(study_report.runs[0].flagged.size(), 1667u);
  EXPECT_EQ(study_report.runs[1].flagged.size(), 50u);
  EXPECT_EQ(study_report.in_every_run.size(), 27u);
  EXPECT_NEAR(study_report.jaccard[0][1], 27.0 / 1690.0, 1e-12);

  const StabilityReport noise_report =
      stability_report({flag_run(passes[0], noise_aware), flag_run(passes[1], noise_aware)}, "noise-aware");
  // Pass 1 also flags its lone dip at M=508, which pass 2 does not repeat.
  EXPECT_DOUBLE_EQ(noise_report.jaccard[0][1], 0.5);
  EXPECT_EQ(noise_report.in_every_run, std::vector<int64_t>{704});
}

}  // namespace
}  // namespace shapescope::analyze
