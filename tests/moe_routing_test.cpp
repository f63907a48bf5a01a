#include "profiler/moe_routing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "common/user_error.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope::profiler {
namespace {

int64_t sum(const std::vector<int64_t>& values) { return std::accumulate(values.begin(), values.end(), int64_t(0)); }

using testing_support::user_error_of;

// A histogram file in a scratch folder, removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& content) : path_(scratch_.write("histogram.csv", content)) {}
  std::string path() const { return path_.string(); }

 private:
  testing_support::ScratchDir scratch_;
  std::filesystem::path path_;
};

TEST(MoeRouting, ParsesEveryFormAndNamesBadInput) {
  EXPECT_EQ(parse_routing("uniform").kind, RoutingKind::uniform);
  EXPECT_EQ(parse_routing("balanced").kind, RoutingKind::balanced);
  const RoutingSpec lognormal = parse_routing("lognormal:1.5");
  EXPECT_EQ(lognormal.kind, RoutingKind::lognormal);
  EXPECT_DOUBLE_EQ(lognormal.parameter, 1.5);
  EXPECT_EQ(lognormal.text(), "lognormal:1.5");
  EXPECT_EQ(lognormal.label(), "lognormal1.5");
  EXPECT_DOUBLE_EQ(parse_routing("zipf:1.2").parameter, 1.2);

  EXPECT_NE(user_error_of([] { parse_routing("gaussian"); }).find("uniform, balanced, lognormal:SIGMA"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { parse_routing("lognormal:-1"); }).find("not a positive number"), std::string::npos);
  EXPECT_NE(user_error_of([] { parse_routing("lognormal:"); }).find("not a positive number"), std::string::npos);
  EXPECT_NE(user_error_of([] { parse_routing("zipf:1.2x"); }).find("not a positive number"), std::string::npos);
  EXPECT_NE(user_error_of([] { parse_routing("uniform:3"); }).find("takes no parameter"), std::string::npos);
  EXPECT_NE(user_error_of([] { parse_routing("file:"); }).find("needs a path"), std::string::npos);
  EXPECT_NE(user_error_of([] { parse_routing("file:/nonexistent/histogram.csv"); }).find("no such file"),
            std::string::npos);
}

TEST(MoeRouting, HistogramFileErrorsNameTheLine) {
  const TempFile header("expert,count\n0,5\n");
  EXPECT_NE(user_error_of([&] { parse_routing("file:" + header.path()); }).find("columns expert and tokens"),
            std::string::npos);
  const TempFile bad_count("expert,tokens\n0,5\n1,many\n");
  const std::string count_error = user_error_of([&] { parse_routing("file:" + bad_count.path()); });
  EXPECT_NE(count_error.find(":3: tokens 'many'"), std::string::npos) << count_error;
  const TempFile negative("expert,tokens\n0,-2\n");
  EXPECT_NE(user_error_of([&] { parse_routing("file:" + negative.path()); }).find("count >= 0"), std::string::npos);
  const TempFile bad_expert("expert,tokens\nx,2\n");
  EXPECT_NE(user_error_of([&] { parse_routing("file:" + bad_expert.path()); }).find("not an expert index"),
            std::string::npos);
  const TempFile twice("expert,tokens\n1,2\n1,3\n");
  EXPECT_NE(user_error_of([&] { parse_routing("file:" + twice.path()); }).find("appears twice"), std::string::npos);
  const TempFile empty("expert,tokens\n");
  EXPECT_NE(user_error_of([&] { parse_routing("file:" + empty.path()); }).find("no rows"), std::string::npos);
  const TempFile ragged("expert,tokens\n0,1,2\n");
  EXPECT_THROW(parse_routing("file:" + ragged.path()), UserError);

  // A histogram that does not fit the layer is refused when the layer's router is made.
  const TempFile wide("expert,tokens\n0,1\n9,1\n");
  const RoutingSpec spec = parse_routing("file:" + wide.path());
  EXPECT_NE(user_error_of([&] { Router(spec, 8, 2, 1); }).find("names expert 9 but the layer has 8 experts"),
            std::string::npos);
  const TempFile narrow("expert,tokens\n0,4\n1,0\n");
  EXPECT_NE(user_error_of([&] { Router(parse_routing("file:" + narrow.path()), 8, 2, 1); }).find("fewer than top_k=2"),
            std::string::npos);
}

// Every token adds one row to top_k distinct experts, so the rows of all experts sum to
// tokens x top_k, and the ranks' local experts split exactly that.
TEST(MoeRouting, RowsSumToTokensTimesTopKAcrossRanks) {
  const TempFile histogram("expert,tokens\n0,10\n1,3\n2,0\n5,7\n7,1\n12,4\n13,2\n30,9\n");
  for (const std::string& text : std::vector<std::string>{"uniform", "balanced", "lognormal:1.0", "zipf:1.1",
                                                          "file:" + histogram.path()}) {
    SCOPED_TRACE(text);
    const Router router(parse_routing(text), 32, 4, 7);
    for (const int64_t tokens : {1, 5, 333, 4096}) {
      const std::vector<int64_t> rows = router.expert_rows(tokens, 1000 + uint64_t(tokens));
      ASSERT_EQ(rows.size(), 32u);
      EXPECT_EQ(sum(rows), tokens * 4);
      // A token never takes one expert twice: no expert holds more rows than there are tokens.
      EXPECT_LE(*std::max_element(rows.begin(), rows.end()), tokens);
      int64_t over_ranks = 0;
      for (int64_t rank = 0; rank < 8; ++rank) {
        const std::vector<int64_t> local = local_rows(rows, 8, rank);
        ASSERT_EQ(local.size(), 4u);
        EXPECT_TRUE(std::equal(local.begin(), local.end(), rows.begin() + rank * 4));
        over_ranks += sum(local);
      }
      EXPECT_EQ(over_ranks, tokens * 4);
    }
  }
}

TEST(MoeRouting, TopKOfAllExpertsGivesEveryExpertEveryToken) {
  const Router router(parse_routing("lognormal:2"), 6, 6, 3);
  const std::vector<int64_t> rows = router.expert_rows(50, 99);
  EXPECT_EQ(rows, std::vector<int64_t>(6, 50));
}

TEST(MoeRouting, SeededAndReproducible) {
  const Router a(parse_routing("lognormal:1.0"), 64, 8, 42), b(parse_routing("lognormal:1.0"), 64, 8, 42);
  EXPECT_EQ(a.popularity(), b.popularity());
  EXPECT_EQ(a.expert_rows(500, 11), b.expert_rows(500, 11));
  EXPECT_NE(a.expert_rows(500, 11), a.expert_rows(500, 12));  // another batch draws other tokens
  const Router c(parse_routing("lognormal:1.0"), 64, 8, 43);
  EXPECT_NE(a.popularity(), c.popularity());  // another seed, other hot experts
}

TEST(MoeRouting, BalancedSpreadsRowsWithinOne) {
  const Router router(parse_routing("balanced"), 256, 8, 1);
  for (const int64_t tokens : {1, 7, 100, 1000}) {
    const std::vector<int64_t> rows = router.expert_rows(tokens, 0);
    const auto [low, high] = std::minmax_element(rows.begin(), rows.end());
    EXPECT_LE(*high - *low, 1) << tokens;
  }
}

double standard_deviation_of_logs(const std::vector<double>& values) {
  double mean = 0;
  for (const double v : values) mean += std::log(v) / double(values.size());
  double squares = 0;
  for (const double v : values) squares += (std::log(v) - mean) * (std::log(v) - mean);
  return std::sqrt(squares / double(values.size() - 1));
}

// Log-normal popularity: the logs of the popularities spread with sigma, and the rows it
// produces are skewed where uniform routing's are not.
TEST(MoeRouting, LognormalSkewFollowsSigma) {
  for (const double sigma : {0.5, 1.0, 2.0}) {
    const Router router(parse_routing("lognormal:" + std::to_string(sigma)), 4096, 8, 5);
    EXPECT_NEAR(standard_deviation_of_logs(router.popularity()), sigma, 0.05 * sigma) << sigma;
  }
  const int64_t tokens = 8192;
  auto max_over_mean = [&](const std::string& text) {
    const std::vector<int64_t> rows = Router(parse_routing(text), 256, 8, 5).expert_rows(tokens, 17);
    return double(*std::max_element(rows.begin(), rows.end())) / (double(tokens) * 8 / 256);
  };
  const double uniform = max_over_mean("uniform"), mild = max_over_mean("lognormal:0.5"),
               skewed = max_over_mean("lognormal:1.5");
  EXPECT_LT(uniform, 1.3);  // 256 rows per expert on average: Poisson-like spread
  EXPECT_GT(mild, uniform);
  EXPECT_GT(skewed, 2 * mild);
}

TEST(MoeRouting, ZipfAndHistogramFollowTheirPopularity) {
  const Router zipf(parse_routing("zipf:1.2"), 64, 4, 9);
  const std::vector<int64_t> rows = zipf.expert_rows(20000, 3);
  const auto hottest = std::max_element(zipf.popularity().begin(), zipf.popularity().end()) - zipf.popularity().begin();
  EXPECT_EQ(std::max_element(rows.begin(), rows.end()) - rows.begin(), hottest);

  const TempFile histogram("expert,tokens\n0,100\n1,0\n2,50\n3,50\n");
  const Router measured(parse_routing("file:" + histogram.path()), 4, 2, 1);
  const std::vector<int64_t> measured_rows = measured.expert_rows(1000, 5);
  EXPECT_EQ(measured_rows[1], 0);  // an expert the histogram never saw gets nothing
  EXPECT_EQ(measured_rows[0] + measured_rows[2] + measured_rows[3], 2000);
  // Top-2 of weights 100, 50, 50: expert 0 is missed only when both draws avoid it, 1/2 x 1/3.
  EXPECT_NEAR(double(measured_rows[0]), 1000.0 * 5 / 6, 60);
}

TEST(MoeRouting, SteepSkewStillGivesEveryTokenTopKDistinctExperts) {
  // zipf:1000 leaves 3^-1000 below any double and lognormal:1e300 overflows exp: the popularity must still
  // let every token find top_k distinct experts (it once indexed expert -1 and corrupted the heap).
  for (const char* text : {"zipf:1000", "zipf:400", "zipf:1e308", "lognormal:1e300"}) {
    SCOPED_TRACE(text);
    const Router router(parse_routing(text), 128, 8, 5);
    for (const double weight : router.popularity()) EXPECT_TRUE(weight > 0 && std::isfinite(weight)) << weight;
    const std::vector<int64_t> rows = router.expert_rows(64, 17);
    EXPECT_EQ(sum(rows), 64 * 8);
    EXPECT_GE(*std::min_element(rows.begin(), rows.end()), 0);
    EXPECT_LE(*std::max_element(rows.begin(), rows.end()), 64);
  }
}

}  // namespace
}  // namespace shapescope::profiler
